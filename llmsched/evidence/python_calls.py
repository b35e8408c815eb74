"""What parsed Python code says to Ray and vLLM, as observations (python_code.py parses).

Names and defaults are Ray's and vLLM's own:

* `@ray.remote(...)`, `ray.remote(...)(cls)`, `.options(...)`: the option table of
  ray-project/ray `python/ray/_private/ray_option_utils.py` (`num_gpus`, `num_cpus`,
  `resources` — where `GPU`/`CPU` are refused —, `accelerator_type`, `memory`,
  `scheduling_strategy`, `runtime_env`; `num_gpus` defaults to none, so the worker holds no
  GPU). `accelerator_type=X` asks for the resource `accelerator_type:X`
  (`RESOURCE_CONSTRAINT_PREFIX`, `python/ray/_private/ray_constants.py`, used by
  `resources_from_ray_options` in `python/ray/_private/utils.py`).
* A worker's `CUDA_VISIBLE_DEVICES` is set by Ray to the GPUs it was granted
  (`python/ray/_private/accelerators/nvidia_gpu.py`,
  `set_current_process_visible_accelerator_ids`: `",".join(ids)`, empty for none), so code
  that touches CUDA in a worker that reserved no GPU sees none.
* `placement_group(bundles, strategy="PACK", name=...)` (`python/ray/util/placement_group.py`)
  and `PlacementGroupSchedulingStrategy(placement_group, placement_group_bundle_index=-1, ...)`
  (`python/ray/util/scheduling_strategies.py`).
* Ray Serve `@serve.deployment(ray_actor_options={...})` (`python/ray/serve/api.py`): the
  replica actor's options.
* `ray.init(num_gpus=..., num_cpus=..., resources=..., address=...)` (`python/ray/_private/worker.py`).
* vLLM's `LLM(model, **engine_args)` (vllm-project/vllm `vllm/entrypoints/llm.py`) and
  `EngineArgs`/`AsyncEngineArgs` (`vllm/engine/arg_utils.py`): their keyword arguments are
  the engine arguments `llmsched.knowledge.vllm.args.parse_engine_kwargs` reads.

Values are read only when they are literals, or names and helper functions the same paste
binds to literals (`opts = {...}`, `def remote_args(): return {...}`); anything else is
unknown, and a fact that depends on it is not asserted.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from llmsched.evidence.block import observation
from llmsched.evidence.observations import Observation
from llmsched.evidence.python_values import (
    UNKNOWN,
    Bindings,
    Parsed,
    Remote,
    cuda_string,
    dotted,
    known,
    last_name,
    numbers,
)

_ENGINE_CALLS = {"LLM", "EngineArgs", "AsyncEngineArgs"}
_VLLM_ENGINES = {"LLM", "LLMEngine", "AsyncLLMEngine", "AsyncEngineArgs", "EngineArgs"}
_RAY_OPTIONS = ("num_gpus", "num_cpus", "memory", "resources", "accelerator_type")


def read_trees(parsed: Sequence[Parsed], path: str, source: str) -> list[Observation]:
    env = Bindings()
    for piece in parsed:
        env.collect(piece.tree)
    remotes: dict[str, Remote] = {}
    anonymous: list[Remote] = []
    out: list[Observation] = []
    for piece in parsed:
        reader = _Reader(piece, env, remotes, anonymous)
        reader.visit(piece.tree)
        out.extend(_engine_and_cluster(reader, path, source))
    for remote in [*remotes.values(), *anonymous]:
        out.append(
            observation(
                "ray.code.remote", "ray", source, remote.text, path, remote.line, remote.fields()
            )
        )
    return out


def _engine_and_cluster(reader: _Reader, path: str, source: str) -> list[Observation]:
    return [
        observation(signature, layer, source, text, path, line, fields)
        for signature, layer, text, line, fields in reader.found
    ]


class _Reader(ast.NodeVisitor):
    def __init__(
        self, piece: Parsed, env: Bindings, remotes: dict[str, Remote], anonymous: list[Remote]
    ) -> None:
        self.piece = piece
        self.env = env
        self.remotes = remotes
        self.anonymous = anonymous
        # (signature, layer, text, line, fields)
        self.found: list[tuple[str, str, str, int, dict[str, Any]]] = []

    # ------------------------------------------------------------ values

    def value(self, node: ast.AST | None, depth: int = 0) -> Any:
        if node is None or depth > 4:
            return UNKNOWN
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        if isinstance(node, ast.Name) and node.id in self.env.values:
            return self.value(self.env.values[node.id], depth + 1)
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for key, item in zip(node.keys, node.values, strict=True):
                if key is None:
                    spread = self.value(item, depth + 1)
                    if not isinstance(spread, dict):
                        return UNKNOWN
                    out.update(spread)
                    continue
                name = self.value(key, depth + 1)
                out[str(name)] = self.value(item, depth + 1)
            return out
        if isinstance(node, ast.Call):
            callee = last_name(node.func)
            if callee == "PlacementGroupSchedulingStrategy":
                return "placement_group"
            if callee == "NodeAffinitySchedulingStrategy":
                return "node_affinity"
            if callee == "dict" and not node.args:
                return self.keywords(node)[0]
            if isinstance(node.func, ast.Name) and node.func.id in self.env.returns:
                return self.value(self.env.returns[node.func.id], depth + 1)
        return UNKNOWN

    def keywords(self, call: ast.Call) -> tuple[dict[str, Any], bool, dict[str, int]]:
        """(literal keyword arguments, whether a `**spread` was not spelled out, lines)."""
        values: dict[str, Any] = {}
        lines: dict[str, int] = {}
        unknown = False
        for keyword in call.keywords:
            if keyword.arg is None:
                spread = self.value(keyword.value)
                if isinstance(spread, dict):
                    values.update(spread)
                    lines.update({str(k): self.piece.line_of(keyword) for k in spread})
                else:
                    unknown = True
                continue
            values[keyword.arg] = self.value(keyword.value)
            lines[keyword.arg] = self.piece.line_of(keyword.value)
        return values, unknown, lines

    # ------------------------------------------------------------ declarations

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._declared(node, "task")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._declared(node, "actor")
        self.generic_visit(node)

    def _declared(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, kind: str
    ) -> None:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = dotted(target)
            if name in ("ray.remote", "remote"):
                remote = self._remote(node.name, kind, decorator)
            elif name in ("serve.deployment", "ray.serve.deployment", "deployment"):
                remote = self._remote(node.name, "deployment", decorator)
            else:
                continue
            remote.gpu_use.extend(self._gpu_use(node))
            return

    def _remote(self, name: str | None, kind: str, decorator: ast.AST) -> Remote:
        remote = Remote(name, kind, self.piece.line_of(decorator), self.piece.quote_of(decorator))
        if isinstance(decorator, ast.Call):
            self._apply_options(remote, decorator)
        if name is None:
            self.anonymous.append(remote)
        else:
            self.remotes[name] = remote
        return remote

    def _apply_options(self, remote: Remote, call: ast.Call) -> None:
        values, unknown, _ = self.keywords(call)
        if remote.kind == "deployment":
            actor = values.get("ray_actor_options")
            if "ray_actor_options" not in values:
                return  # options of the deployment, not of its actor
            values, unknown = (actor, unknown) if isinstance(actor, dict) else ({}, True)
        remote.options.update(values)
        remote.unknown = remote.unknown or unknown
        env = values.get("runtime_env")
        if isinstance(env, dict):
            inner = env.get("env_vars")
            env_vars: dict[str, Any] = inner if isinstance(inner, dict) else env
            if "CUDA_VISIBLE_DEVICES" in env_vars:
                remote.gpu_use.append(
                    {
                        "what": "sets CUDA_VISIBLE_DEVICES in runtime_env",
                        "line": self.piece.line_of(call),
                    }
                )

    def _gpu_use(self, node: ast.AST) -> list[dict[str, Any]]:
        """What in a task/actor body needs a GPU: vLLM's engine, torch.cuda, `.cuda()`,
        a `cuda` device, CUDA_VISIBLE_DEVICES, `ray.get_gpu_ids()`."""
        found: list[dict[str, Any]] = []
        for inner in ast.walk(node):
            what = None
            if isinstance(inner, ast.Call):
                name = dotted(inner.func)
                head = name.split(".")[0]
                if last_name(inner.func) in _VLLM_ENGINES or head == "vllm":
                    what = f"builds vLLM's {last_name(inner.func)}"
                elif name.endswith("get_gpu_ids"):
                    what = "ray.get_gpu_ids()"
                elif last_name(inner.func) == "cuda" and isinstance(inner.func, ast.Attribute):
                    what = ".cuda()"
                elif any(cuda_string(a) for a in [*inner.args, *(k.value for k in inner.keywords)]):
                    what = "a cuda device"
            elif isinstance(inner, ast.Attribute) and dotted(inner).startswith("torch.cuda."):
                what = dotted(inner)
            elif isinstance(inner, ast.Constant) and inner.value == "CUDA_VISIBLE_DEVICES":
                what = "CUDA_VISIBLE_DEVICES"
            if what is not None and all(f["what"] != what for f in found):
                found.append({"what": what, "line": self.piece.line_of(inner)})
        return found

    # ------------------------------------------------------------ calls

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func)
        last = last_name(node.func)
        if last == "options" and isinstance(node.func, ast.Attribute):
            self._options(node)
        elif isinstance(node.func, ast.Call) and dotted(node.func.func) == "ray.remote":
            self._functional_remote(node)
        elif last == "placement_group" and name in ("placement_group", "ray.util.placement_group"):
            self._placement_group(node)
        elif name == "ray.init":
            values, _, _ = self.keywords(node)
            keys = ("num_gpus", "num_cpus", "resources", "address")
            fields: dict[str, Any] = {k: values[k] for k in keys if k in values}
            self._observe("ray.code.init", "ray", node, known(fields))
        elif last in _ENGINE_CALLS and (name == last or name.startswith("vllm.")):
            self._engine_call(node, last)
        self.generic_visit(node)

    def _options(self, node: ast.Call) -> None:
        assert isinstance(node.func, ast.Attribute)
        target = node.func.value
        name = dotted(target)
        remote = self.remotes.get(name)
        if remote is None:
            values, _, _ = self.keywords(node)
            if not any(
                k in values for k in (*_RAY_OPTIONS, "scheduling_strategy", "ray_actor_options")
            ):
                return
            kind = "deployment" if "ray_actor_options" in values else "actor"
            remote = Remote(name or None, kind, self.piece.line_of(node), "")
            if name:
                self.remotes[name] = remote
            else:
                self.anonymous.append(remote)
        remote.line = self.piece.line_of(node)
        remote.text = self.piece.quote_of(node, whole=True)
        self._apply_options(remote, node)

    def _functional_remote(self, node: ast.Call) -> None:
        decorator = node.func
        target = node.args[0] if node.args else None
        name = dotted(target) if target is not None else None
        remote = self._remote(name, "actor", decorator)
        del remote

    def _placement_group(self, node: ast.Call) -> None:
        values, _, _ = self.keywords(node)
        bundles = self.value(node.args[0]) if node.args else values.get("bundles", UNKNOWN)
        strategy = (
            self.value(node.args[1]) if len(node.args) > 1 else values.get("strategy", "PACK")
        )
        fields: dict[str, Any] = {"strategy": strategy if isinstance(strategy, str) else None}
        if isinstance(bundles, list) and all(isinstance(b, dict) for b in bundles):
            fields["bundles"] = [numbers(b) for b in bundles]
        else:
            fields["bundles"] = None
        self._observe("ray.code.placement-group", "ray", node, fields)

    def _observe(self, signature: str, layer: str, node: ast.Call, fields: dict[str, Any]) -> None:
        """One observation: the whole call quoted, at its first line."""
        quote = self.piece.quote_of(node, whole=True)
        self.found.append((signature, layer, quote, self.piece.line_of(node), fields))

    def _engine_call(self, node: ast.Call, callee: str) -> None:
        values, unknown, lines = self.keywords(node)
        arguments = {k: v for k, v in values.items() if v != UNKNOWN}
        if node.args and callee == "LLM":
            model = self.value(node.args[0])
            if isinstance(model, str) and model != UNKNOWN:
                arguments.setdefault("model", model)
        if not arguments:
            return
        fields = {
            "call": callee,
            "arguments": arguments,
            "argument_lines": {k: lines[k] for k in arguments if k in lines},
            "spread": unknown,
        }
        self._observe("vllm.llm-kwargs", "vllm", node, fields)
