"""Configuration: `.llmsched.yaml` (auto-discovered) or `[tool.llmsched]` in pyproject.toml.

Keys (kebab or snake case): select, extend-select, ignore, severity ({ID: level}),
exemptions ([{rules: [...], namespace: ..., name: ..., kind: ..., path: glob, reason: ...}]),
fail-on, disallow-annotation-suppressions, rules-dir, max-file-size, workload (what requests
look like: a whole number of tokens per request, or a `replay --workload` spec such as
`prompt=lognormal:1500:8192,output=300`; lint sizes max-num-seqs against it).
Selectors are rule IDs (K8S001), prefixes (VLLM, K8S01), names (gpu-limit-missing) or layers
(layer:ray).
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmsched.errors import ConfigError
from llmsched.model import Location, Severity, Subject

CONFIG_NAMES = (".llmsched.yaml", ".llmsched.yml")
FAIL_ON = ("error", "warning", "info", "never")
_KEYS = {
    "select",
    "extend_select",
    "ignore",
    "severity",
    "exemptions",
    "fail_on",
    "disallow_annotation_suppressions",
    "rules_dir",
    "max_file_size",
    "workload",
}


@dataclass(frozen=True)
class Exemption:
    rules: tuple[str, ...]
    namespace: str | None = None
    name: str | None = None
    kind: str | None = None
    path: str | None = None
    reason: str = "exempted in config"

    def matches(
        self,
        rule_code: str,
        rule_name: str,
        layer: str,
        subject: Subject,
        location: Location | None,
    ) -> bool:
        if self.rules and not any(
            selector_matches(s, rule_code, rule_name, layer) for s in self.rules
        ):
            return False
        checks = (
            (self.namespace, subject.namespace),
            (self.name, subject.name),
            (self.kind, subject.kind),
            (self.path, location.path if location else None),
        )
        return all(
            pattern is None or (value is not None and fnmatch.fnmatch(value, pattern))
            for pattern, value in checks
        )


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    exemptions: tuple[Exemption, ...] = ()
    fail_on: str = "error"
    disallow_annotation_suppressions: bool = False
    rules_dir: tuple[str, ...] = ()
    max_file_size: int = 10 * 2**20
    workload: str | None = None  # tokens per request, or a `replay --workload` spec
    source: str | None = None

    def is_selected(self, code: str, name: str, layer: str) -> bool:
        chosen = self.select or ("ALL",)
        selected = any(
            selector_matches(s, code, name, layer) for s in (*chosen, *self.extend_select)
        )
        return selected and not any(selector_matches(s, code, name, layer) for s in self.ignore)

    def severity_for(self, code: str, name: str, default: Severity) -> Severity:
        return self.severity.get(code) or self.severity.get(name) or default


def selector_matches(selector: str, code: str, name: str, layer: str) -> bool:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if selector.startswith("layer:"):
        return selector[len("layer:") :] == layer
    return selector == name or code.startswith(selector.upper()) if selector else False


def _as_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(
        f"{key} must be a list of rule IDs, prefixes, names or layer:NAME", Location(where)
    )


def parse_config(
    raw: Mapping[str, Any], where: str, lines: Mapping[str, int] | None = None
) -> Config:
    """``lines``: the line of each top-level key, for errors that point at it."""
    data = {str(k).replace("-", "_"): v for k, v in raw.items()}
    at = {str(k).replace("-", "_"): line for k, line in (lines or {}).items()}

    def located(key: str) -> Location:
        return Location(where, at.get(key))

    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(
            f"unknown config key {unknown[0]!r} (known: "
            f"{', '.join(sorted(k.replace('_', '-') for k in _KEYS))})",
            Location(where),
        )
    severity: dict[str, Severity] = {}
    levels = data.get("severity") or {}
    if not isinstance(levels, Mapping):
        raise ConfigError("severity must be a mapping {rule: level}", located("severity"))
    for key, level in levels.items():
        try:
            if not isinstance(level, str):
                raise ValueError(f"a level is a word (error, warning, info), not {level!r:.40}")
            severity[str(key)] = Severity.parse(level)
        except ValueError as exc:
            raise ConfigError(f"severity.{key}: {exc}", located("severity")) from None
    exemptions = []
    items = data.get("exemptions") or []
    if not isinstance(items, list):
        raise ConfigError("exemptions must be a list of mappings", located("exemptions"))
    for item in items:
        if not isinstance(item, Mapping):
            raise ConfigError("each exemption must be a mapping", located("exemptions"))
        fields = {f: item.get(f) for f in ("namespace", "name", "kind", "path")}
        odd = next((f for f, v in fields.items() if v is not None and not isinstance(v, str)), "")
        if odd:
            raise ConfigError(f"exemptions[].{odd} must be a string", located("exemptions"))
        exemptions.append(
            Exemption(
                rules=_as_list(item.get("rules"), "exemptions[].rules", where),
                namespace=fields["namespace"],
                name=fields["name"],
                kind=fields["kind"],
                path=fields["path"],
                reason=str(item.get("reason", "exempted in config")),
            )
        )
    fail_on = str(data.get("fail_on", "error")).lower()
    if fail_on not in FAIL_ON:
        raise ConfigError(f"fail-on must be one of {', '.join(FAIL_ON)}", Location(where))
    max_size = data.get("max_file_size", 10 * 2**20)
    if not isinstance(max_size, int) or max_size <= 0:
        raise ConfigError("max-file-size must be a positive number of bytes", Location(where))
    workload = data.get("workload")
    if workload is not None and (isinstance(workload, bool) or not isinstance(workload, int | str)):
        raise ConfigError(
            "workload must be tokens per request or a workload spec such as "
            "'prompt=lognormal:1500:8192,output=300'",
            Location(where),
        )
    return Config(
        select=_as_list(data.get("select"), "select", where),
        extend_select=_as_list(data.get("extend_select"), "extend-select", where),
        ignore=_as_list(data.get("ignore"), "ignore", where),
        severity=severity,
        exemptions=tuple(exemptions),
        fail_on=fail_on,
        disallow_annotation_suppressions=bool(data.get("disallow_annotation_suppressions", False)),
        rules_dir=_as_list(data.get("rules_dir"), "rules-dir", where),
        max_file_size=max_size,
        workload=str(workload) if workload is not None else None,
        source=where,
    )


def _read_yaml_config(path: Path) -> Config:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text) or {}
    except (ValueError, RecursionError) as exc:  # a 4,300-digit int, deep nesting
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
        raise ConfigError(f"invalid YAML: {reason}", Location(str(path))) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(
            f"invalid YAML: {getattr(exc, 'problem', exc)}",
            Location(str(path), mark.line + 1 if mark else None),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", Location(str(path))) from None
    if not isinstance(raw, Mapping):
        raise ConfigError("config must be a mapping", Location(str(path)))
    return parse_config(raw, str(path), _key_lines(text))


def _key_lines(text: str) -> dict[str, int]:
    """The 1-based line of each top-level key of a YAML mapping (already loaded once)."""
    import yaml

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 1
        for key, _value in root.value
        if isinstance(key, yaml.ScalarNode)
    }


def _read_pyproject(path: Path) -> Config | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read pyproject.toml: {exc}", Location(str(path))) from None
    section = data.get("tool", {}).get("llmsched")
    return parse_config(section, f"{path} [tool.llmsched]") if section is not None else None


def discover_config(explicit: str | None = None, start: Path | None = None) -> Config:
    """Explicit file, else the nearest `.llmsched.yaml` or `[tool.llmsched]` upwards."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        if path.name == "pyproject.toml":
            return _read_pyproject(path) or Config(source=str(path))
        return _read_yaml_config(path)
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return _read_yaml_config(folder / name)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            found = _read_pyproject(pyproject)
            if found is not None:
                return found
        if (folder / ".git").exists():
            break
    return Config()


def merge_cli(
    config: Config,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    fail_on: str | None = None,
    max_file_size: int | None = None,
    rules_dir: Sequence[str] = (),
) -> Config:
    from dataclasses import replace

    return replace(
        config,
        select=tuple(select) or config.select,
        ignore=(*config.ignore, *ignore),
        fail_on=fail_on or config.fail_on,
        max_file_size=max_file_size or config.max_file_size,
        rules_dir=(*config.rules_dir, *rules_dir),
    )
