"""Find and load rule files: `--rules-dir`/`LLMSCHED_RULES_DIR`, the checkout's `rules/`,
then the copy packaged in the wheel (`llmsched/_rules`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from llmsched.engine.spec import RuleSpec
from llmsched.errors import RuleError
from llmsched.model import Location
from llmsched.user_cache import cached, content_key

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_REQUIRED = (
    "code",
    "name",
    "kind",
    "layer",
    "severity",
    "summary",
    "rationale",
    "remediation",
    "references",
)


def builtin_rules_dir() -> Path:
    package_dir = Path(__file__).resolve().parent.parent
    packaged = package_dir / "_rules"
    if packaged.is_dir():
        return packaged
    checkout = package_dir.parent / "rules"
    if checkout.is_dir():
        return checkout
    raise RuleError("cannot find the built-in rules (neither llmsched/_rules nor ./rules)")


def rules_dirs(extra: Sequence[str | Path] = ()) -> list[Path]:
    dirs = [builtin_rules_dir()]
    env = os.environ.get("LLMSCHED_RULES_DIR")
    for item in [*(env.split(os.pathsep) if env else []), *extra]:
        path = Path(item)
        if not path.is_dir():
            raise RuleError(f"rules directory not found: {item}")
        dirs.append(path)
    return dirs


def _rule_files(directory: Path) -> Iterable[Path]:
    return sorted(p for p in directory.rglob("*.yaml") if p.is_file())


def _validate_user_rule(data: dict[str, Any], path: Path) -> None:
    import json

    import jsonschema

    schema = json.loads((builtin_rules_dir() / "schema.json").read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=str)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise RuleError(f"invalid rule file: {where}: {first.message}", Location(str(path)))


def load_rule_file(path: Path, *, validate: bool = False) -> RuleSpec:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"cannot read rule file: {exc}", Location(str(path))) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise RuleError(
            f"invalid YAML in rule file: {getattr(exc, 'problem', exc)}", Location(str(path), line)
        ) from None
    if not isinstance(data, dict):
        raise RuleError("a rule file must be a mapping", Location(str(path)))
    if validate:
        _validate_user_rule(data, path)
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise RuleError(f"rule file lacks {', '.join(missing)}", Location(str(path)))
    return RuleSpec.from_dict(data, str(path))


def load_rules(extra_dirs: Sequence[str | Path] = (), kind: str | None = None) -> list[RuleSpec]:
    """All rules, built-in first; a user rule with a built-in code is an error.

    Parsed rules are kept in the user cache, keyed by every rule file's path and content
    (and the schema user rules are checked against): a changed file is parsed again."""
    builtin = builtin_rules_dir()
    files = [
        (path, directory != builtin)
        for directory in rules_dirs(extra_dirs)
        for path in _rule_files(directory)
    ]
    try:
        parts = [(builtin / "schema.json").read_bytes()]
        for path, is_user in files:
            parts += [f"{path}\0{is_user}".encode(), path.read_bytes()]
    except OSError:
        return _load_rules(files, kind)  # unreadable: let the parse say which file
    return cached("rules", content_key(f"rules-{kind}", parts), lambda: _load_rules(files, kind))


def _load_rules(files: Sequence[tuple[Path, bool]], kind: str | None) -> list[RuleSpec]:
    specs: dict[str, RuleSpec] = {}
    for path, is_user in files:
        if path.name == "schema.json":
            continue
        spec = load_rule_file(path, validate=is_user)
        if spec.code in specs:
            raise RuleError(
                f"duplicate rule code {spec.code} (also in {specs[spec.code].path})",
                Location(str(path)),
            )
        specs[spec.code] = spec
    rules = [s for s in specs.values() if s.status == "active"]
    if kind is not None:
        rules = [s for s in rules if s.kind == kind]
    return sorted(rules, key=_sort_key)


def _sort_key(spec: RuleSpec) -> tuple[int, str, int]:
    order = {"K8S": 0, "RAY": 1, "VLLM": 2, "DK8S": 3, "DRAY": 4, "DVLLM": 5}
    prefix = spec.code.rstrip("0123456789")
    return (order.get(prefix, 9), prefix, int(spec.code[len(prefix) :]))
