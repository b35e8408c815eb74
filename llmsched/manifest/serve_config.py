"""Ray Serve LLM engines in a RayService `serveConfigV2` (YAML kept inside a string).

Each application's `args.llm_configs[]` / `args.llm_config` (Ray Serve LLM's `LLMConfig`:
`model_loading_config`, `engine_kwargs`, `accelerator_type`...) or a plain mapping of vLLM
engine arguments becomes one `VllmInvocation`, located by its line inside the string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import yaml

from llmsched.knowledge.vllm.args import parse_engine_kwargs
from llmsched.knowledge.vllm.options import known_dest
from llmsched.knowledge.vllm.versions import vllm_version_from_image
from llmsched.manifest.embedded_yaml import node_line, parse_embedded_yaml
from llmsched.manifest.env import env_bool
from llmsched.manifest.runtime_env import merged_runtime_env, pinned_vllm, runtime_env_vars
from llmsched.manifest.views import ArgLocation, Path, VllmInvocation
from llmsched.manifest.walker import mapping

_LLM_CONFIG_EXTRAS = (
    "accelerator_type",
    "deployment_config",
    "placement_group_config",
    "runtime_env",
)


def serve_config_engines(
    raw: Any, path: Path, image: str | None, errors: list[str]
) -> list[VllmInvocation]:
    """The engines of the serve config at `path`; a string that is not YAML adds an error."""
    if raw is None:
        return []
    node: yaml.Node | None = None
    if isinstance(raw, str):
        try:
            data, node = parse_embedded_yaml(raw)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1} of the string)" if mark is not None else ""
            errors.append(f"serveConfigV2 is not valid YAML{where}: {exc}")
            return []
    else:
        data = raw
    reader = _ServeConfig(path, node, image)
    out: list[VllmInvocation] = []
    apps = mapping(data).get("applications")
    for a_index, app in enumerate(apps if isinstance(apps, list) else []):
        args = mapping(mapping(app).get("args"))
        app_path: Path = ("applications", a_index, "args")
        app_env = mapping(app).get("runtime_env")
        configs = args.get("llm_configs")
        if isinstance(configs, list):
            for c_index, config in enumerate(configs):
                if isinstance(config, Mapping):
                    inner = (*app_path, "llm_configs", c_index)
                    out.append(reader.llm_config(config, inner, app_env))
        elif isinstance(args.get("llm_config"), Mapping):
            out.append(reader.llm_config(args["llm_config"], (*app_path, "llm_config"), app_env))
        elif args and any(isinstance(k, str) and known_dest(k) for k in args):
            out.append(reader.enginemapping(args, app_path, {}))
    return out


class _ServeConfig:
    """One serve config: where it sits (`path`, its node tree) and the engine image."""

    def __init__(self, path: Path, node: yaml.Node | None, image: str | None) -> None:
        self.path = path
        self.node = node
        self.image = image

    def at(self, inner: Path) -> ArgLocation:
        return ArgLocation(self.path, node_line(self.node, inner))

    def llm_config(
        self, config: Mapping[str, Any], inner: Path, app_env: Any = None
    ) -> VllmInvocation:
        kwargs = dict(mapping(config.get("engine_kwargs")))
        loading = mapping(config.get("model_loading_config"))
        model_id = loading.get("model_id")
        source = loading.get("model_source")
        if isinstance(source, Mapping) and isinstance(source.get("bucket_uri"), str):
            source = source["bucket_uri"]  # a cloud mirror (S3/GCS): weights not from the hub
        model = source if isinstance(source, str) else model_id
        extras = {key: config[key] for key in _LLM_CONFIG_EXTRAS if key in config}
        runtime_env = merged_runtime_env(app_env, config.get("runtime_env"))
        if runtime_env:
            extras["runtime_env"] = runtime_env
        if model_id is not None:
            extras["model_id"] = model_id
        invocation = self.enginemapping(kwargs, (*inner, "engine_kwargs"), extras)
        pinned = pinned_vllm(runtime_env)
        invocation = replace(
            invocation,
            version=pinned or invocation.version,
            use_v1=env_bool(runtime_env_vars(runtime_env).get("VLLM_USE_V1")),
        )
        if model is not None and "model" not in kwargs:
            key = "model_source" if isinstance(source, str) else "model_id"
            return replace(
                invocation,
                model=str(model),
                explicit={**invocation.explicit, "model": str(model)},
                locations={
                    **invocation.locations,
                    "model": self.at((*inner, "model_loading_config", key)),
                },
                location=self.at(inner),
            )
        return replace(invocation, location=self.at(inner))

    def enginemapping(
        self, kwargs: Mapping[str, Any], inner: Path, extras: Mapping[str, Any]
    ) -> VllmInvocation:
        parsed = parse_engine_kwargs(kwargs)
        locations: dict[str, ArgLocation] = {}
        for key in kwargs:
            dest = str(key).replace("-", "_")
            if dest in parsed.explicit:
                locations[dest] = self.at((*inner, key))
        return VllmInvocation(
            model=parsed.model,
            explicit=parsed.explicit,
            locations=locations,
            source="serveConfigV2",
            location=self.at(inner),
            version=vllm_version_from_image(self.image),
            image=self.image,
            unknown=parsed.unknown,
            errors=parsed.errors,
            extras=dict(extras),
        )
