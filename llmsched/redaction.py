"""Keep secrets out of every output: scrub what collectors gather, every bundle written and
every Report before a renderer sees it.

Collectors scrub before data enters a Snapshot (so a live run and a reloaded bundle agree);
``write_bundle`` scrubs again whatever reaches a bundle; ``redact_report`` scrubs a Report of
lint or diagnose, whatever the evidence came from (pasted logs, manifests, bundles). Layers:

1. structure: env vars whose *name* looks like a credential (``HF_TOKEN``, ``DB_PASSWORD``,
   ``OPENAI_API_KEY``) lose their literal value; so does any string under a secret-like key
   anywhere (``vault.hashicorp.com/agent-token``, a Ray job's ``metadata.password``,
   ``*_token``, ``*_key``, ``client-key-data``); ``--api-key X`` style arguments lose the
   next argument; the ``last-applied-configuration`` annotation is parsed and scrubbed the
   same way, since it repeats the whole spec;
2. patterns in any text (logs, args, error messages): ``hf_…``, ``ghp_…`` and AWS key ids,
   JWTs, ``Bearer …``/``Basic …``, ``token=…``/``password: …``/``api_key=…``, quoted
   secret-like keys in dict reprs (vLLM logs its ``non-default args: {...}`` at start-up,
   ``api_key`` and ``hf_token`` included: vllm/entrypoints/utils.py ``log_non_default_args``),
   ``user:pass@`` in URLs;
3. known values: credentials llmsched itself holds (the kubeconfig's bearer token, the
   Ray auth token) are registered and removed wherever they appear verbatim.

Secret objects are never fetched, and ``valueFrom.secretKeyRef`` carries only a reference.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any, TypeVar

from llmsched.model import (
    Evidence,
    Finding,
    InputError,
    Layer,
    Location,
    NotEvaluated,
    Report,
    Severity,
    Subject,
)

T = TypeVar("T")

REDACTED = "<redacted>"

SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|"
    r"CREDENTIAL|AUTH|(^|[_-])KEY$|^KEY$|SESSION[_-]?ID|COOKIE)",
    re.IGNORECASE,
)
SECRET_FLAG = re.compile(
    r"^--?(api[_-]?key|hf[_-]?token|token|password|secret|auth[_-]?token|access[_-]?key)$",
    re.IGNORECASE,
)

# A key (in JSON, YAML or a dict repr) whose string value is a credential. The last segment
# counts, so `vault.hashicorp.com/agent-token` and `metadata.password` match; a bare `key`
# (tolerations, selectors, configMapKeyRef) does not.
SECRET_KEY = re.compile(
    r"(?i)(?:^|[_./-])(?:token|password|passwd|passphrase|secret|credentials?|api[_-]?key|"
    r"access[_-]?key|private[_-]?key|secret[_-]?key|client[_-]?secret|key[_-]data)$|"
    r"^.+[_-](?:token|key)$"
)
# Tallies llmsched writes itself, keyed by a Kubernetes kind: `{"Secret": 3}` is a count.
COUNTS_BY_NAME = frozenset({"objects_by_kind"})
_SECRET_WORDS = (
    r"api[_-]?key|access[_-]?key|secret|password|passwd|token|auth[_-]?token|key-data|"
    r"[a-z0-9]+_key"
)

_TEXT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # a PEM private key block, whole (its body has no word that says what it is); one cut
    # off (a log's tail, a truncated value) loses everything after its header
    (
        re.compile(
            r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?:.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----)"
            r"|.*\Z)",
            re.DOTALL,
        ),
        r"\1" + REDACTED + r"\2",
    ),
    (re.compile(r"\bhf_[A-Za-z0-9]{8,}"), REDACTED),
    (re.compile(r"\b(sk-[A-Za-z0-9_-]{16,})"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), REDACTED),
    # an auth scheme word, not the tail of a name such as `vllm-basic` or `my_bearer`
    (
        re.compile(r"(?i)(?<![\w.-])((?:bearer|basic)\s+)(?!<redacted>)[A-Za-z0-9._~+/=-]+"),
        r"\1" + REDACTED,
    ),
    # 'api_key': ['k1', 'k2'] or "hf_token": "x" in a dict repr or JSON text
    (
        re.compile(
            r"(?i)([\"'][a-z0-9_.-]*(?:" + _SECRET_WORDS + r")[\"']\s*:\s*)"
            r"(\[[^\]]*\]|'[^']*'|\"[^\"]*\")"
        ),
        r"\1'" + REDACTED + "'",
    ),
    (
        re.compile(
            r"(?i)((?:" + _SECRET_WORDS + r")"
            r"[\"']?\s*[=:]\s*[\"']?)(?!<redacted>)([^\s\"',;&}\]]+)"
        ),
        r"\1" + REDACTED,
    ),
    (
        re.compile(r"(?i)(--(?:api-key|hf-token|token|password)[= ])(?!<redacted>)(\S+)"),
        r"\1" + REDACTED,
    ),
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+@"), r"\1" + REDACTED + "@"),
)

# Cheap first look: a string none of the patterns could touch skips the substitutions
# (most strings in a 5k-pod list are names, times and quantities).
_MAYBE_SECRET = re.compile(
    r"hf_|sk-|gh[pousr]_|github_pat_|AKIA|ASIA|eyJ|bearer|basic|_key|api[_-]?key|access[_-]?key|"
    r"key-data|secret|passw|token|--(?:api-key|hf-token)|://[^/\s:@]+:[^/\s@]+@|private key-",
    re.IGNORECASE,
)

# The same look on ASCII text, lower-cased first: a case-sensitive search skips ahead where
# the case-blind one tries every branch at every character (10x on a long line). Only
# ASCII text: there lower() and the case-blind match agree (`ſ`, `K` fold otherwise).
_MAYBE_SECRET_LOWER = re.compile(_MAYBE_SECRET.pattern.lower())


# Substrings one of which every match of `_MAYBE_SECRET_LOWER` holds: a few `in` tests
# (each a fast scan) rule out most strings before the regex tries every position.
_MAYBE_SECRET_PARTS = (
    "key", "token", "secret", "passw", "hf_", "sk-", "gh", "github_pat_", "akia", "asia",
    "eyj", "bearer", "basic", "://", "private key-",
)  # fmt: skip


def _maybe_secret(text: str) -> bool:
    if text.isascii():
        lowered = text.lower()
        if not any(part in lowered for part in _MAYBE_SECRET_PARTS):
            return False
        return _MAYBE_SECRET_LOWER.search(lowered) is not None
    return _MAYBE_SECRET.search(text) is not None


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# scrubbed strings remembered per Redactor: short ones, a bounded number (logs are not kept)
_REMEMBERED_CHARS = 8192
_REMEMBERED_STRINGS = 100_000


class Redactor:
    """Scrubs text and JSON; ``add_secret`` registers a literal to remove everywhere."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self._secrets: set[str] = set()
        # a report repeats its strings (a rule's remediation in each of 2,000 findings)
        self._done: dict[str, str] = {}
        # a report shares its subjects and locations among findings (immutable: scrubbed once)
        self._shared: dict[int, tuple[Any, Any]] = {}
        for secret in secrets or []:
            self.add_secret(secret)

    def add_secret(self, value: str | None) -> None:
        # very short values would blank out unrelated text; they are caught by patterns
        if value and len(value) >= 6:
            self._secrets.add(value)
            if value.lower().startswith("bearer "):
                self._secrets.add(value[7:])
            self._done.clear()
            self._shared.clear()

    def text(self, text: str) -> str:
        """`text` scrubbed; `text` itself (not an equal copy) when nothing was removed, so
        that a report walk can tell by identity what it may share."""
        done = self._done.get(text)
        if done is None:
            done = self._scrub(text)
            if len(text) <= _REMEMBERED_CHARS and len(self._done) < _REMEMBERED_STRINGS:
                self._done[text] = done
        return text if done == text else done

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if not _maybe_secret(text):
            return text
        for pattern, replacement in _TEXT_PATTERNS:
            text = pattern.sub(replacement, text)
        return text

    def json(self, node: Any) -> Any:
        """A scrubbed copy of decoded JSON (Kubernetes objects, Ray endpoint data)."""
        if isinstance(node, dict):
            return self._dict(node)
        if isinstance(node, list):
            return self._list(node)
        if isinstance(node, str):
            return self.text(node)
        return node

    def _dict(self, node: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "env" and isinstance(value, list):
                out[key] = [self._env_var(v) for v in value]
            elif key in ("env_vars", "envVars") and isinstance(value, dict):
                out[key] = {
                    k: REDACTED if SECRET_NAME.search(k) and isinstance(v, str) else self.json(v)
                    for k, v in value.items()
                }
            elif key in ("command", "args") and isinstance(value, list):
                out[key] = self._argv(value)
            elif _is_tally(key, value):
                out[key] = value
            elif key in (LAST_APPLIED, "serialized_runtime_env") and isinstance(value, str):
                out[key] = self._embedded_json(value)
            elif _is_secret_value(key, value):
                out[key] = REDACTED
            else:
                out[key] = self.json(value)
        return out

    def _list(self, node: list[Any]) -> list[Any]:
        return [self.json(v) for v in node]

    def _env_var(self, var: Any) -> Any:
        if not isinstance(var, dict):
            return self.json(var)
        out = self._dict({k: v for k, v in var.items()})
        name = str(var.get("name", ""))
        if "value" in var and isinstance(var["value"], str) and SECRET_NAME.search(name):
            out["value"] = REDACTED
        return out

    def _argv(self, argv: list[Any]) -> list[Any]:
        out: list[Any] = []
        hide_next = False
        for arg in argv:
            if hide_next and isinstance(arg, str):
                out.append(REDACTED)
                hide_next = False
                continue
            hide_next = isinstance(arg, str) and bool(SECRET_FLAG.match(arg))
            out.append(self.json(arg))
        return out

    def _embedded_json(self, text: str) -> str:
        try:
            decoded = json.loads(text)
        except ValueError:
            return self.text(text)
        return json.dumps(self.json(decoded), separators=(",", ":"))

    def report(self, report: Report) -> Report:
        """``report`` with every string scrubbed: messages, evidence, verdict, stats (parts
        with nothing to scrub are shared with ``report``, not copied)."""
        return self._walk(report)

    def _walk(self, node: T) -> T:
        kind = type(node)
        if kind is str:
            return self.text(node)  # type: ignore[arg-type, return-value]
        if kind in _PLAIN or node is None or isinstance(node, (bool, int, float, Enum)):
            return node
        if isinstance(node, str):
            return self.text(node)  # type: ignore[return-value]
        if kind in _SHARED:
            seen = self._shared.get(id(node))
            if seen is None:
                seen = self._shared[id(node)] = (node, self._walk_dataclass(node))
            return seen[1]
        if kind is Evidence and _is_secret_value(node.key, node.value):  # type: ignore[attr-defined]
            return replace(node, value=REDACTED)  # type: ignore[type-var]
        # what nothing in changed is handed back as it is (most of a report holds no secret)
        if kind in _DATACLASSES:
            return self._walk_dataclass(node)
        if isinstance(node, Evidence) and _is_secret_value(node.key, node.value):
            return replace(node, value=REDACTED)  # a subclass of Evidence
        if is_dataclass(node) and not isinstance(node, type):
            return self._walk_dataclass(node)
        if isinstance(node, tuple):
            items = tuple(self._walk(v) for v in node)
            return node if _same(items, node) else items  # type: ignore[return-value]
        if isinstance(node, dict):
            walked = {
                k: v
                if _is_tally(k, v)
                else (self._walk(v) if not _is_secret_value(k, v) else REDACTED)
                for k, v in node.items()
            }
            return node if _same(walked.values(), node.values()) else walked  # type: ignore[return-value]
        if isinstance(node, list):
            walked_list = [self._walk(v) for v in node]
            return node if _same(walked_list, node) else walked_list  # type: ignore[return-value]
        return node

    def _walk_dataclass(self, node: Any) -> Any:
        changes: dict[str, Any] = {}
        walk, text = self._walk, self.text
        for name in _init_fields(node.__class__):
            value = getattr(node, name)
            kind = type(value)
            if kind in _PLAIN:  # most fields of a finding: not worth a call
                continue
            walked = text(value) if kind is str else walk(value)
            if walked is not value:
                changes[name] = walked
        return replace(node, **changes) if changes else node


_SHARED = frozenset({Subject, Location})
# exact types met in every report, tried before the general checks below them
_PLAIN = frozenset({type(None), bool, int, float, Layer, Severity})
_DATACLASSES = frozenset({Finding, NotEvaluated, InputError, Evidence})


def _is_tally(key: Any, value: Any) -> bool:
    """One of llmsched's own counts by kind (`{"Secret": 3}`): its keys are not credentials."""
    return (
        key in COUNTS_BY_NAME
        and isinstance(value, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value.values())
    )


@functools.lru_cache(maxsize=64)
def _init_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.init)


def _same(walked: Iterable[Any], given: Iterable[Any]) -> bool:
    return all(a is b for a, b in zip(walked, given, strict=True))


def _is_secret_value(key: Any, value: Any) -> bool:
    """A scalar (not a flag) under a secret-like key; objects under such keys are walked."""
    return (
        isinstance(key, str)
        and isinstance(value, (str, int, float))
        and not isinstance(value, bool)
        and value != ""
        and _secret_key(key)
    )


@functools.lru_cache(maxsize=4096)  # a report repeats its evidence keys
def _secret_key(key: str) -> bool:
    return SECRET_KEY.search(key) is not None


def redact_report(report: Report) -> Report:
    return Redactor().report(report)
