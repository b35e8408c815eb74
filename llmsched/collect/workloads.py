"""Where pods, containers and vLLM invocations live in a Kubernetes/KubeRay/KServe object.

`extract_workload(obj)` takes one plain-dict object and returns the pod templates it
embeds, their containers (with any `vllm serve` / api_server invocation and `ray start`
found in their command), and the Ray Serve LLM engines of a RayService or RayJob. Every
argument keeps the JSON path of the field it came from, so a finding can point at the line;
inside a shell string or `serveConfigV2`, `ArgLocation.inner_line` is the 0-based line
within that string.

Nothing here judges: rules read these views.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from llmsched.collect.embedded_yaml import node_line, parse_embedded_yaml
from llmsched.knowledge.vllm.args import (
    ParsedArgs,
    merge_config,
    parse_engine_kwargs,
    parse_vllm_argv,
)
from llmsched.knowledge.vllm.defaults import effective_args
from llmsched.knowledge.vllm.options import known_dest
from llmsched.knowledge.vllm.versions import vllm_version_from_image

Path = tuple[str | int, ...]

_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_API_SERVER_MODULES = {"vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"}
_MULTI_NODE_SCRIPT = "multi-node-serving.sh"
_GENERIC_DEPTH = 6


@dataclass(frozen=True)
class ArgLocation:
    path: Path
    inner_line: int | None = None  # 0-based line inside the string at `path`


@dataclass(frozen=True)
class VllmInvocation:
    model: str | None
    explicit: dict[str, Any]
    locations: dict[str, ArgLocation]  # dest -> where it was set
    source: str  # "container" (command/args list), "shell", "entrypoint" (image), "serveConfigV2"
    location: ArgLocation  # the invocation itself
    version: str | None  # None = newest, "unknown" = cannot tell
    image: str | None
    unknown: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    use_v1: bool | None = None  # VLLM_USE_V1 from the container env, when literal
    config_file: str | None = None  # the `--config` file merged in, when found
    extras: Mapping[str, Any] = field(default_factory=dict)  # Ray Serve LLM: accelerator_type...

    def effective(
        self, gpu_memory_bytes: int | None = None, *, gpu_name: str | None = None
    ) -> dict[str, Any]:
        return effective_args(
            self.explicit,
            self.version,
            gpu_memory_bytes,
            gpu_name=gpu_name,
            use_v1=self.use_v1,
        )


@dataclass(frozen=True)
class ContainerView:
    name: str
    image: str | None
    data: Mapping[str, Any]
    path: Path
    init: bool
    vllm: VllmInvocation | None
    ray_start: dict[str, Any] | None
    env: dict[str, str]  # literal env values only (valueFrom stays out)


@dataclass(frozen=True)
class PodTemplateView:
    role: str  # pod, template, job, head, worker, leader, predictor, runtime, submitter
    group: str | None
    replicas: int | None
    pods_per_replica: int  # pods this template makes per replica (LWS workers: size-1)
    path: Path  # path to the pod spec dict
    spec: Mapping[str, Any]
    metadata: Mapping[str, Any]  # template labels/annotations
    containers: tuple[ContainerView, ...]
    ray_start_params: Mapping[str, Any] | None = None
    ray_start_params_path: Path | None = None
    group_pods: int = 1  # pods in one replica group across templates (LWS size, KubeRay hosts)

    @property
    def main_containers(self) -> tuple[ContainerView, ...]:
        return tuple(c for c in self.containers if not c.init)


@dataclass(frozen=True)
class Workload:
    kind: str
    name: str
    namespace: str | None
    templates: tuple[PodTemplateView, ...]
    serve_llm: tuple[VllmInvocation, ...]  # serveConfigV2 / RayJob entrypoint engines
    is_ray: bool
    errors: tuple[str, ...] = ()  # e.g. serveConfigV2 that is not YAML

    def invocations(self) -> Iterator[VllmInvocation]:
        for template in self.templates:
            for container in template.containers:
                if container.vllm is not None:
                    yield container.vllm
        yield from self.serve_llm


# --- public entry --------------------------------------------------------------------------


def extract_workload(
    obj: Mapping[str, Any],
    config_files: Mapping[str, Mapping[str, Any]] | None = None,
) -> Workload | None:
    """Views of one object; None when it embeds no pod template and no vLLM invocation."""
    if not isinstance(obj, Mapping):
        return None
    kind = str(obj.get("kind") or "")
    meta = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    ctx = _Context(config_files or {})
    templates: list[PodTemplateView] = []
    serve: list[VllmInvocation] = []
    is_ray = kind in ("RayCluster", "RayService", "RayJob")

    if kind == "Pod":
        templates += ctx.template("pod", None, 1, ("spec",), spec, meta)
    elif kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"):
        templates += ctx.template_at(
            obj, ("spec", "template"), "template", None, _int(spec.get("replicas"), default=1)
        )
    elif kind == "DaemonSet":
        templates += ctx.template_at(obj, ("spec", "template"), "template", None, None)
    elif kind == "Job":
        templates += ctx.template_at(
            obj, ("spec", "template"), "job", None, _int(spec.get("parallelism"), default=1)
        )
    elif kind == "CronJob":
        job_spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
        templates += ctx.template_at(
            obj,
            ("spec", "jobTemplate", "spec", "template"),
            "job",
            None,
            _int(job_spec.get("parallelism"), default=1),
        )
    elif kind == "RayCluster":
        templates += ctx.ray_cluster(spec, ("spec",))
    elif kind == "RayService":
        templates += ctx.ray_cluster(
            _mapping(spec.get("rayClusterConfig")), ("spec", "rayClusterConfig")
        )
        serve += ctx.serve_config(spec.get("serveConfigV2"), ("spec", "serveConfigV2"), templates)
    elif kind == "RayJob":
        templates += ctx.ray_cluster(
            _mapping(spec.get("rayClusterSpec")), ("spec", "rayClusterSpec")
        )
        templates += ctx.template_at(obj, ("spec", "submitterPodTemplate"), "submitter", None, 1)
        serve += ctx.entrypoint(spec.get("entrypoint"), ("spec", "entrypoint"), templates)
    elif kind == "LeaderWorkerSet":
        templates += ctx.leader_worker_set(spec)
    elif kind in ("ServingRuntime", "ClusterServingRuntime"):
        templates += ctx.serving_runtime(spec)
    elif kind == "InferenceService":
        templates += ctx.inference_service(spec)
    else:
        templates += ctx.generic(obj)

    if not templates and not serve:
        return None
    return Workload(
        kind=kind,
        name=str(meta.get("name") or ""),
        namespace=str(meta["namespace"]) if meta.get("namespace") else None,
        templates=tuple(templates),
        serve_llm=tuple(serve),
        is_ray=is_ray or any(t.ray_start_params is not None for t in templates),
        errors=tuple(ctx.errors),
    )


# --- object shapes -------------------------------------------------------------------------


class _Context:
    def __init__(self, config_files: Mapping[str, Mapping[str, Any]]) -> None:
        self.config_files = config_files
        self.errors: list[str] = []

    def template_at(
        self,
        obj: Mapping[str, Any],
        path: Path,
        role: str,
        group: str | None,
        replicas: int | None,
        *,
        pods_per_replica: int = 1,
        group_pods: int = 1,
        ray_params: tuple[Mapping[str, Any], Path] | None = None,
    ) -> list[PodTemplateView]:
        template = _get(obj, path)
        if not isinstance(template, Mapping):
            return []
        return self.template(
            role,
            group,
            replicas,
            (*path, "spec"),
            _mapping(template.get("spec")),
            _mapping(template.get("metadata")),
            pods_per_replica=pods_per_replica,
            group_pods=group_pods,
            ray_params=ray_params,
        )

    def template(
        self,
        role: str,
        group: str | None,
        replicas: int | None,
        spec_path: Path,
        pod_spec: Mapping[str, Any],
        metadata: Mapping[str, Any],
        *,
        pods_per_replica: int = 1,
        group_pods: int = 1,
        ray_params: tuple[Mapping[str, Any], Path] | None = None,
    ) -> list[PodTemplateView]:
        if not pod_spec:
            return []
        containers = [
            *self.containers(pod_spec, spec_path, "initContainers", init=True),
            *self.containers(pod_spec, spec_path, "containers", init=False),
        ]
        return [
            PodTemplateView(
                role=role,
                group=group,
                replicas=replicas,
                pods_per_replica=pods_per_replica,
                path=spec_path,
                spec=pod_spec,
                metadata=metadata,
                containers=tuple(containers),
                ray_start_params=ray_params[0] if ray_params else None,
                ray_start_params_path=ray_params[1] if ray_params else None,
                group_pods=group_pods,
            )
        ]

    def containers(
        self, pod_spec: Mapping[str, Any], spec_path: Path, key: str, *, init: bool
    ) -> list[ContainerView]:
        items = pod_spec.get(key)
        if not isinstance(items, list):
            return []
        return [
            self.container(item, (*spec_path, key, index), init=init)
            for index, item in enumerate(items)
            if isinstance(item, Mapping)
        ]

    def container(
        self, data: Mapping[str, Any], path: Path, *, init: bool, entrypoint_args: bool = False
    ) -> ContainerView:
        image = str(data["image"]) if data.get("image") else None
        env = literal_env(data.get("env"))
        vllm, ray_start = self.container_commands(data, path, image, env, entrypoint_args)
        return ContainerView(
            name=str(data.get("name") or ""),
            image=image,
            data=data,
            path=path,
            init=init,
            vllm=vllm,
            ray_start=ray_start,
            env=env,
        )

    def container_commands(
        self,
        data: Mapping[str, Any],
        path: Path,
        image: str | None,
        env: Mapping[str, str],
        entrypoint_args: bool,
    ) -> tuple[VllmInvocation | None, dict[str, Any] | None]:
        tokens: list[tuple[str, ArgLocation]] = []
        for key in ("command", "args"):
            items = data.get(key)
            if isinstance(items, list):
                tokens += [
                    (expand_k8s_vars(str(item), env), ArgLocation((*path, key, index)))
                    for index, item in enumerate(items)
                    if item is not None
                ]
        if not tokens:
            return None, None
        words = [t for t, _ in tokens]
        has_command = isinstance(data.get("command"), list) and bool(data.get("command"))
        shell_at = _shell_script_index(words)
        if shell_at is not None:
            text, location = tokens[shell_at]
            return self.from_shell(text, location.path, image, env)
        found = find_vllm_argv(words)
        ray_start = find_ray_start(words)
        if found is not None:
            start, positional = found
            return self.invocation(
                tokens[start:], positional, "container", tokens[start - 1][1], image, env
            ), ray_start
        if not has_command and (entrypoint_args or _is_vllm_server_image(image)):
            return self.invocation(
                tokens, True, "entrypoint", ArgLocation((*path, "args")), image, env
            ), ray_start
        return None, ray_start

    def from_shell(
        self, text: str, path: Path, image: str | None, env: Mapping[str, str]
    ) -> tuple[VllmInvocation | None, dict[str, Any] | None]:
        vllm: VllmInvocation | None = None
        ray_start: dict[str, Any] | None = None
        for command in shell_commands(text, env):
            words = [w for w, _ in command]
            if ray_start is None:
                ray_start = find_ray_start(words)
            found = find_vllm_argv(words) if vllm is None else None
            if found is not None:
                start, positional = found
                tokens = [(w, ArgLocation(path, line)) for w, line in command[start:]]
                vllm = self.invocation(
                    tokens,
                    positional,
                    "shell",
                    ArgLocation(path, command[start - 1][1]),
                    image,
                    env,
                )
        return vllm, ray_start

    def invocation(
        self,
        tokens: Sequence[tuple[str, ArgLocation]],
        positional: bool,
        source: str,
        location: ArgLocation,
        image: str | None,
        env: Mapping[str, str],
    ) -> VllmInvocation:
        parsed = parse_vllm_argv([t for t, _ in tokens], positional_model=positional)
        locations = {dest: tokens[index][1] for dest, index in parsed.token_index.items()}
        config_file: str | None = None
        config_path = parsed.explicit.get("config")
        if isinstance(config_path, str):
            config = self.config_files.get(config_path) or self.config_files.get(
                posixpath.basename(config_path)
            )
            if config is not None:
                config_file = config_path
                from_config = parse_engine_kwargs(config, abbreviations=True)
                where = locations.get("config", location)
                for dest in from_config.explicit:
                    locations.setdefault(dest, where)
                parsed = merge_config(parsed, from_config)
        return VllmInvocation(
            model=parsed.model,
            explicit=parsed.explicit,
            locations=locations,
            source=source,
            location=location,
            version=vllm_version_from_image(image),
            image=image,
            unknown=parsed.unknown,
            errors=parsed.errors,
            use_v1=_env_bool(env.get("VLLM_USE_V1")),
            config_file=config_file,
        )

    # --- KubeRay ---------------------------------------------------------------------------

    def ray_cluster(self, spec: Mapping[str, Any], base: Path) -> list[PodTemplateView]:
        out: list[PodTemplateView] = []
        head = _mapping(spec.get("headGroupSpec"))
        if head:
            out += self.template_at(
                spec,
                ("headGroupSpec", "template"),
                "head",
                "head",
                1,
                ray_params=_ray_params(head, (*base, "headGroupSpec")),
            )
        groups = spec.get("workerGroupSpecs")
        for index, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, Mapping):
                continue
            replicas = _int(group.get("replicas"))
            if replicas is None:
                replicas = _int(group.get("minReplicas"))
            hosts = _int(group.get("numOfHosts"), default=1) or 1
            out += self.template_at(
                spec,
                ("workerGroupSpecs", index, "template"),
                "worker",
                str(group.get("groupName") or f"group-{index}"),
                replicas,
                pods_per_replica=hosts,
                group_pods=hosts,
                ray_params=_ray_params(group, (*base, "workerGroupSpecs", index)),
            )
        return [_rebase(view, base) for view in out]

    def serve_config(
        self, raw: Any, path: Path, templates: Sequence[PodTemplateView]
    ) -> list[VllmInvocation]:
        if raw is None:
            return []
        node: yaml.Node | None = None
        if isinstance(raw, str):
            try:
                data, node = parse_embedded_yaml(raw)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" (line {mark.line + 1} of the string)" if mark is not None else ""
                self.errors.append(f"serveConfigV2 is not valid YAML{where}: {exc}")
                return []
        else:
            data = raw
        image = _engine_image(templates)
        out: list[VllmInvocation] = []
        apps = _mapping(data).get("applications")
        for a_index, app in enumerate(apps if isinstance(apps, list) else []):
            args = _mapping(_mapping(app).get("args"))
            app_path: Path = ("applications", a_index, "args")
            configs = args.get("llm_configs")
            if isinstance(configs, list):
                for c_index, config in enumerate(configs):
                    if isinstance(config, Mapping):
                        out.append(
                            self.llm_config(
                                config, (*app_path, "llm_configs", c_index), path, node, image
                            )
                        )
            elif isinstance(args.get("llm_config"), Mapping):
                out.append(
                    self.llm_config(
                        args["llm_config"], (*app_path, "llm_config"), path, node, image
                    )
                )
            elif args and any(_is_engine_key(k) for k in args):
                out.append(self.engine_mapping(args, app_path, path, node, image, {}))
        return out

    def llm_config(
        self,
        config: Mapping[str, Any],
        inner: Path,
        path: Path,
        node: yaml.Node | None,
        image: str | None,
    ) -> VllmInvocation:
        kwargs = dict(_mapping(config.get("engine_kwargs")))
        loading = _mapping(config.get("model_loading_config"))
        model_id = loading.get("model_id")
        source = loading.get("model_source")
        model = source if isinstance(source, str) else model_id
        extras = {
            key: config[key]
            for key in (
                "accelerator_type",
                "deployment_config",
                "placement_group_config",
                "runtime_env",
            )
            if key in config
        }
        if model_id is not None:
            extras["model_id"] = model_id
        invocation = self.engine_mapping(
            kwargs, (*inner, "engine_kwargs"), path, node, image, extras
        )
        if model is not None and "model" not in kwargs:
            explicit = {**invocation.explicit, "model": str(model)}
            key = "model_source" if isinstance(source, str) else "model_id"
            locations = {
                **invocation.locations,
                "model": ArgLocation(path, node_line(node, (*inner, "model_loading_config", key))),
            }
            return _replace(
                invocation,
                model=str(model),
                explicit=explicit,
                locations=locations,
                location=ArgLocation(path, node_line(node, inner)),
            )
        return _replace(invocation, location=ArgLocation(path, node_line(node, inner)))

    def engine_mapping(
        self,
        kwargs: Mapping[str, Any],
        inner: Path,
        path: Path,
        node: yaml.Node | None,
        image: str | None,
        extras: Mapping[str, Any],
    ) -> VllmInvocation:
        parsed: ParsedArgs = parse_engine_kwargs(kwargs)
        locations: dict[str, ArgLocation] = {}
        for key in kwargs:
            dest = str(key).replace("-", "_")
            if dest in parsed.explicit:
                locations[dest] = ArgLocation(path, node_line(node, (*inner, key)))
        return VllmInvocation(
            model=parsed.model,
            explicit=parsed.explicit,
            locations=locations,
            source="serveConfigV2",
            location=ArgLocation(path, node_line(node, inner)),
            version=vllm_version_from_image(image),
            image=image,
            unknown=parsed.unknown,
            errors=parsed.errors,
            extras=dict(extras),
        )

    def entrypoint(
        self, raw: Any, path: Path, templates: Sequence[PodTemplateView]
    ) -> list[VllmInvocation]:
        if not isinstance(raw, str):
            return []
        vllm, _ = self.from_shell(raw, path, _engine_image(templates), {})
        return [vllm] if vllm is not None else []

    # --- LeaderWorkerSet, KServe, anything else --------------------------------------------

    def leader_worker_set(self, spec: Mapping[str, Any]) -> list[PodTemplateView]:
        lwt = _mapping(spec.get("leaderWorkerTemplate"))
        size = _int(lwt.get("size"), default=1) or 1
        replicas = _int(spec.get("replicas"), default=1)
        base: Path = ("spec", "leaderWorkerTemplate")
        out: list[PodTemplateView] = []
        if isinstance(lwt.get("leaderTemplate"), Mapping):
            out += self.template_at(
                lwt, ("leaderTemplate",), "leader", None, replicas, group_pods=size
            )
            worker_pods = size - 1
        else:
            worker_pods = size  # the worker template makes the leader pod too
        out += self.template_at(
            lwt,
            ("workerTemplate",),
            "worker",
            None,
            replicas,
            pods_per_replica=worker_pods,
            group_pods=size,
        )
        return [_rebase(view, base) for view in out]

    def serving_runtime(self, spec: Mapping[str, Any]) -> list[PodTemplateView]:
        out = self.template("runtime", None, None, ("spec",), spec, {})
        worker = _mapping(spec.get("workerSpec"))
        if worker:
            out += self.template("worker", None, None, ("spec", "workerSpec"), worker, {})
        return out

    def inference_service(self, spec: Mapping[str, Any]) -> list[PodTemplateView]:
        predictor = _mapping(spec.get("predictor"))
        if not predictor:
            return []
        replicas = _int(predictor.get("minReplicas"))
        base: Path = ("spec", "predictor")
        views = self.template("predictor", None, replicas, base, predictor, {})
        model = _mapping(predictor.get("model"))
        if model:
            fmt = str(_mapping(model.get("modelFormat")).get("name") or "").lower()
            runtime = str(model.get("runtime") or "").lower()
            engine_args = fmt == "huggingface" or "vllm" in runtime
            container = self.container(
                {"name": "kserve-container", **model},
                (*base, "model"),
                init=False,
                entrypoint_args=engine_args,
            )
            existing = views[0].containers if views else ()
            views = [
                PodTemplateView(
                    role="predictor",
                    group=None,
                    replicas=replicas,
                    pods_per_replica=1,
                    path=base,
                    spec=predictor,
                    metadata={},
                    containers=(container, *existing),
                )
            ]
        worker = _mapping(predictor.get("workerSpec"))
        if worker:
            views += self.template("worker", None, replicas, (*base, "workerSpec"), worker, {})
        return views

    def generic(self, obj: Mapping[str, Any]) -> list[PodTemplateView]:
        out: list[PodTemplateView] = []
        for path, value in _walk(obj, (), _GENERIC_DEPTH):
            if path[-1:] == ("template",) and isinstance(value, Mapping):
                pod_spec = _mapping(value.get("spec"))
                if isinstance(pod_spec.get("containers"), list):
                    out += self.template(
                        "template",
                        None if path[:-1] == ("spec",) else _path_label(path[:-1]),
                        None,
                        (*path, "spec"),
                        pod_spec,
                        _mapping(value.get("metadata")),
                    )
            elif (
                isinstance(value, Mapping)
                and isinstance(value.get("containers"), list)
                and not any(_is_prefix(v.path, path) for v in out)
            ):
                out += self.template("template", _path_label(path), None, path, value, {})
        return out


# --- commands ------------------------------------------------------------------------------


def find_vllm_argv(words: Sequence[str]) -> tuple[int, bool] | None:
    """Index where vLLM's own arguments start, and whether a positional model is allowed.

    `vllm serve ...` (behind `exec`, `env A=b`, `uv run`, a path...) and
    `python -m vllm.entrypoints.openai.api_server ...`.
    """
    for index, word in enumerate(words[:-1]):
        if posixpath.basename(word) == "vllm" and words[index + 1] == "serve":
            return index + 2, True
        if word == "-m" and words[index + 1] in _API_SERVER_MODULES:
            return index + 2, False
    return None


def find_ray_start(words: Sequence[str]) -> dict[str, Any] | None:
    """`ray start --head --num-gpus=0 ...` -> {"head": True, "num-gpus": "0", ...}.

    The keys and string values follow KubeRay's rayStartParams. vLLM's
    `multi-node-serving.sh leader|worker` (which runs `ray start`) counts too.
    """
    for index, word in enumerate(words[:-1]):
        if posixpath.basename(word) == "ray" and words[index + 1] == "start":
            return _ray_params_from_argv(words[index + 2 :])
        if posixpath.basename(word) == _MULTI_NODE_SCRIPT:
            role = words[index + 1]
            params = _ray_params_from_argv(words[index + 2 :])
            if role == "leader":
                params["head"] = True
            return params
    return None


def _ray_params_from_argv(args: Sequence[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("--"):
            key, sep, value = word[2:].partition("=")
            key = key.replace("_", "-")
            if sep:
                params[key] = value
            elif index + 1 < len(args) and not args[index + 1].startswith("-"):
                params[key] = args[index + 1]
                index += 1
            else:
                params[key] = True
        index += 1
    return params


def _shell_script_index(words: Sequence[str]) -> int | None:
    """`sh -c SCRIPT`, `bash -lc SCRIPT`, `/bin/bash -ec SCRIPT`: index of SCRIPT."""
    if not words or posixpath.basename(words[0]) not in _SHELLS:
        return None
    for index in range(1, len(words)):
        word = words[index]
        if not word.startswith("-") or word.startswith("--"):
            return None
        if "c" in word[1:]:
            return index + 1 if index + 1 < len(words) else None
    return None


def _is_vllm_server_image(image: str | None) -> bool:
    """Images whose ENTRYPOINT is vLLM's OpenAI server (so bare `args` are vLLM args)."""
    if not image:
        return False
    repo = image.partition("@")[0]
    last = repo.rsplit("/", 1)[-1].partition(":")[0].lower()
    return "vllm-openai" in last or "huggingfaceserver" in last


# --- environment and shell -----------------------------------------------------------------

_K8S_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def literal_env(items: Any) -> dict[str, str]:
    """Container env with literal values, `$(VAR)` of earlier entries expanded (K8s order)."""
    env: dict[str, str] = {}
    if not isinstance(items, list):
        return env
    for item in items:
        if isinstance(item, Mapping) and item.get("name") and "valueFrom" not in item:
            value = item.get("value")
            env[str(item["name"])] = expand_k8s_vars("" if value is None else str(value), env)
    return env


def expand_k8s_vars(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes command/args expansion: `$(VAR)` from env, `$$` -> `$`, unknown kept."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _K8S_VAR.sub(replace, text)


_OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "\n")


def shell_commands(text: str, env: Mapping[str, str]) -> list[list[tuple[str, int]]]:
    """Split a POSIX shell script into simple commands of (word, 0-based line).

    Quotes, backslash escapes, `\\` line continuations and comments are honoured;
    `$VAR`/`${VAR}` expand from `env` when known, otherwise stay as written;
    `$(...)` command substitutions stay as written.
    """
    commands: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    word: list[str] = []
    word_line: int | None = None
    line = 0
    i = 0
    n = len(text)

    def finish_word() -> None:
        nonlocal word, word_line
        if word_line is not None:
            current.append(("".join(word), word_line))
        word, word_line = [], None

    def finish_command() -> None:
        nonlocal current
        finish_word()
        if current:
            commands.append(current)
        current = []

    def start_word() -> None:
        nonlocal word_line
        if word_line is None:
            word_line = line

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                line += 1
                i += 2
                continue
            start_word()
            word.append(text[i + 1])
            i += 2
            continue
        if ch in " \t\r":
            finish_word()
            i += 1
            continue
        if ch == "#" and word_line is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        operator = next((op for op in _OPERATORS if text.startswith(op, i)), None)
        if operator is not None:
            finish_command()
            if operator == "\n":
                line += 1
            i += len(operator)
            continue
        start_word()
        if ch == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            chunk = text[i + 1 : end]
            line += chunk.count("\n")
            word.append(chunk)
            i = end + 1
            continue
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    if text[i + 1] == "\n":
                        line += 1
                    else:
                        word.append(text[i + 1])
                    i += 2
                    continue
                if text[i] == "$":
                    expanded, i = _expand_dollar(text, i, env)
                    word.append(expanded)
                    continue
                if text[i] == "\n":
                    line += 1
                word.append(text[i])
                i += 1
            i += 1
            continue
        if ch == "$":
            expanded, i = _expand_dollar(text, i, env)
            word.append(expanded)
            continue
        word.append(ch)
        i += 1
    finish_command()
    return commands


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _expand_dollar(text: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """Expand the `$...` at text[i]; return (replacement, index after it)."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt == "(":
        depth, j = 0, i + 1
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        return text[i:j], j
    if nxt == "{":
        end = text.find("}", i + 2)
        if end < 0:
            return text[i:], len(text)
        body = text[i + 2 : end]
        name_match = _SHELL_NAME.match(body)
        if name_match:
            name = name_match.group()
            rest = body[len(name) :]
            if name in env and (not rest or rest.startswith((":-", "-"))):
                return env[name], end + 1
            if name not in env and rest.startswith((":-", "-")):
                return rest.split("-", 1)[1], end + 1
        return text[i : end + 1], end + 1
    match = _SHELL_NAME.match(text, i + 1)
    if match and match.group() in env:
        return env[match.group()], match.end()
    if match:
        return text[i : match.end()], match.end()
    return "$", i + 1


# --- helpers -------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return default


def _env_bool(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    return None


def _get(obj: Any, path: Path) -> Any:
    for key in path:
        if isinstance(key, int):
            if not isinstance(obj, list) or key >= len(obj):
                return None
            obj = obj[key]
        else:
            if not isinstance(obj, Mapping):
                return None
            obj = obj.get(key)
    return obj


def _ray_params(group: Mapping[str, Any], group_path: Path) -> tuple[Mapping[str, Any], Path]:
    params = group.get("rayStartParams")
    return (params if isinstance(params, Mapping) else {}), (*group_path, "rayStartParams")


def _rebase(view: PodTemplateView, base: Path) -> PodTemplateView:
    def fix(path: Path) -> Path:
        return (*base, *path)

    containers = tuple(
        ContainerView(
            name=c.name,
            image=c.image,
            data=c.data,
            path=fix(c.path),
            init=c.init,
            vllm=_rebase_invocation(c.vllm, base),
            ray_start=c.ray_start,
            env=c.env,
        )
        for c in view.containers
    )
    return PodTemplateView(
        role=view.role,
        group=view.group,
        replicas=view.replicas,
        pods_per_replica=view.pods_per_replica,
        path=fix(view.path),
        spec=view.spec,
        metadata=view.metadata,
        containers=containers,
        ray_start_params=view.ray_start_params,
        ray_start_params_path=view.ray_start_params_path,  # already absolute
        group_pods=view.group_pods,
    )


def _rebase_invocation(inv: VllmInvocation | None, base: Path) -> VllmInvocation | None:
    if inv is None:
        return None

    def fix(loc: ArgLocation) -> ArgLocation:
        return ArgLocation((*base, *loc.path), loc.inner_line)

    return _replace(
        inv,
        location=fix(inv.location),
        locations={dest: fix(loc) for dest, loc in inv.locations.items()},
    )


def _replace(inv: VllmInvocation, **changes: Any) -> VllmInvocation:
    return replace(inv, **changes)


def _engine_image(templates: Sequence[PodTemplateView]) -> str | None:
    """The image the Ray engine runs in: a worker's first container, else the head's."""
    for role in ("worker", "head"):
        for view in templates:
            if view.role == role:
                for container in view.main_containers:
                    if container.image:
                        return container.image
    return None


def _is_engine_key(key: Any) -> bool:
    return isinstance(key, str) and known_dest(key)


def _walk(obj: Any, path: Path, depth: int) -> Iterator[tuple[Path, Any]]:
    if depth < 0:
        return
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(key, str):
                child = (*path, key)
                yield child, value
                yield from _walk(value, child, depth - 1)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            child = (*path, index)
            yield child, value
            yield from _walk(value, child, depth - 1)


def _is_prefix(prefix: Path, path: Path) -> bool:
    return path[: len(prefix)] == prefix


def _path_label(path: Path) -> str:
    return ".".join(str(p) for p in path)
