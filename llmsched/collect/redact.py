"""Keep secrets inside the cluster: scrub what collectors gather before it is stored.

Three layers of protection, all applied before data enters a Snapshot (so a live run and
a reloaded bundle agree):

1. structure: env vars whose *name* looks like a credential (``HF_TOKEN``, ``DB_PASSWORD``,
   ``OPENAI_API_KEY``) lose their literal value; ``--api-key X`` style arguments lose the
   next argument; the ``last-applied-configuration`` annotation is parsed and scrubbed the
   same way, since it repeats the whole spec;
2. patterns in any text (logs, args, error messages): ``hf_…`` tokens, ``Bearer …``,
   ``token=…``/``password: …``/``api_key=…``, ``user:pass@`` in URLs;
3. known values: credentials llmsched itself holds (the kubeconfig's bearer token, the
   Ray auth token) are registered and removed wherever they appear verbatim.

Secret objects are never fetched, and ``valueFrom.secretKeyRef`` carries only a reference.
"""

from __future__ import annotations

import json
import re
from typing import Any

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

_TEXT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bhf_[A-Za-z0-9]{8,}"), REDACTED),
    (re.compile(r"\b(sk-[A-Za-z0-9_-]{16,})"), REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + REDACTED),
    (
        re.compile(
            r"(?i)((?:api[_-]?key|access[_-]?key|secret|password|passwd|token|auth[_-]?token)"
            r"[\"']?\s*[=:]\s*[\"']?)(?!<redacted>)([^\s\"',;&}]+)"
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
    r"hf_|sk-|bearer|api[_-]?key|access[_-]?key|secret|passw|token|--(?:api-key|hf-token)|"
    r"://[^/\s:@]+:[^/\s@]+@",
    re.IGNORECASE,
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Redactor:
    """Scrubs text and JSON; ``add_secret`` registers a literal to remove everywhere."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self._secrets: set[str] = set()
        for secret in secrets or []:
            self.add_secret(secret)

    def add_secret(self, value: str | None) -> None:
        # very short values would blank out unrelated text; they are caught by patterns
        if value and len(value) >= 6:
            self._secrets.add(value)
            if value.lower().startswith("bearer "):
                self._secrets.add(value[7:])

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if not _MAYBE_SECRET.search(text):
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
            elif key in (LAST_APPLIED, "serialized_runtime_env") and isinstance(value, str):
                out[key] = self._embedded_json(value)
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
