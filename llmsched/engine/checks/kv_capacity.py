"""KV-cache sizing rules: VLLM002, VLLM003, VLLM005, VLLM008 (shared arithmetic in
`llmsched.knowledge.kv_capacity`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.gpu_use import container_gpu, gpu_worker_pods
from llmsched.engine.request_length import request_length
from llmsched.engine.scope import SubjectView
from llmsched.engine.sizing import served_model
from llmsched.knowledge.gpus import resource_slice
from llmsched.manifest.gpu_pinning import pinned_gpu
from llmsched.model import Evidence, Severity

GIB = 1024**3


_GPUS_PER_NODE = 8  # the usual largest GPU node: how far TP may grow inside one pod


def _tp_room(view: SubjectView) -> int:
    """How many GPUs tensor parallelism may span: a single-pod engine can raise its GPU limit
    up to a full node; a multi-pod one (LWS group, Ray workers) keeps TP inside its pods."""
    if (
        view.template is not None
        and view.template.group_pods <= 1
        and not view.template.ray_start_params
    ):
        return _GPUS_PER_NODE
    if view.container is not None:
        return int(container_gpu(view.container)["limit"])
    gpu = view.variables.get("gpu")
    return int(gpu.get("limit", 0)) if isinstance(gpu, Mapping) else 0


def _engine_gpu(view: SubjectView) -> tuple[Any, str]:
    """The GPU of the subject's engine: its pod's, or for Ray Serve LLM its worker groups'."""
    assert view.invocation is not None
    pod = view.template.spec if view.template is not None else None
    workers = gpu_worker_pods(view.workload) if pod is None else []
    gpu, why = pinned_gpu(pod, view.annotations, view.invocation, workers)
    if gpu is not None and view.container is not None:  # a MIG slice of the pinned card
        gpu = resource_slice(gpu, str(container_gpu(view.container)["key"]))
    return gpu, why


def sizing(view: SubjectView) -> tuple[Any, Any, dict[str, Any], str | None]:
    """(capacity, model, effective args, why not) for the subject's engine."""
    from llmsched.errors import LlmschedError
    from llmsched.knowledge.kv_capacity import kv_capacity

    invocation = view.invocation
    if invocation is None:
        return None, None, {}, "no vLLM invocation"
    gpu, gpu_why = _engine_gpu(view)
    if gpu is None:
        return None, None, {}, gpu_why
    model, model_why = served_model(invocation, view.annotations)
    if model is None:
        return None, None, {}, model_why
    args = invocation.effective(gpu.memory_bytes, gpu_name=gpu.name)
    try:
        capacity = kv_capacity(
            model,
            gpu,
            tp=int(args.get("tensor_parallel_size") or 1),
            pp=int(args.get("pipeline_parallel_size") or 1),
            gpu_memory_utilization=float(args["gpu_memory_utilization"]),
            block_size=int(args["block_size"]),
            kv_cache_dtype=str(args.get("kv_cache_dtype") or "auto"),
            dtype=str(args.get("dtype") or "auto"),
            quantization=args.get("quantization") or model.quantization,
            max_num_batched_tokens=args.get("max_num_batched_tokens"),
            max_model_len=args.get("max_model_len"),
        )
    except (LlmschedError, ValueError, KeyError) as exc:
        return None, None, {}, f"cannot size the KV cache: {exc}"
    return capacity, model, args, None


def _evidence(capacity: Any, args: Mapping[str, Any]) -> tuple[Evidence, ...]:
    return (
        Evidence("knowledge", "gpu", capacity.gpu_name),
        Evidence("knowledge", "model", capacity.model_id),
        Evidence(
            "knowledge", "weights_gib_per_gpu", round(capacity.weights_bytes_per_gpu / GIB, 2)
        ),
        Evidence("knowledge", "kv_bytes_per_token_per_gpu", capacity.kv_bytes_per_token_per_gpu),
        Evidence("knowledge", "num_gpu_blocks", capacity.num_gpu_blocks),
        Evidence("knowledge", "kv_tokens", capacity.tokens_capacity),
        Evidence("manifest", "max_num_seqs", args.get("max_num_seqs")),
    )


def _at(view: SubjectView, dest: str) -> tuple[Any, int | None, str | None]:
    """Where `dest` was set (path, line inside a string, the flag to look for there)."""
    assert view.invocation is not None
    location = view.invocation.locations.get(dest)
    if location is None:
        return view.invocation.location.path, view.invocation.location.inner_line, None
    return location.path, location.inner_line, dest


@check("kv_weights_fit")
def kv_weights_fit(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    capacity, model, args, why = sizing(view)
    if capacity is None:
        yield Outcome(not_evaluated=why)
        return
    tp, pp = capacity.tp, capacity.pp
    if (
        capacity.weights_bytes_per_gpu
        > capacity.requested_bytes_per_gpu - capacity.overhead_bytes_per_gpu
    ):
        path, inner, flag = _at(view, "tensor_parallel_size")
        budget = capacity.requested_bytes_per_gpu - capacity.overhead_bytes_per_gpu
        yield Outcome(
            message=f"{model.id} needs {capacity.weights_bytes / GIB:.0f} GiB of weights; over "
            f"TP {tp} × PP {pp} that is {capacity.weights_bytes_per_gpu / GIB:.1f} GiB per GPU, "
            "but "
            f"{capacity.gpu_name} × {capacity.gpu_memory_utilization:g} gives "
            f"{capacity.requested_bytes_per_gpu / GIB:.1f} GiB (and ~"
            f"{capacity.overhead_bytes_per_gpu / GIB:.1f} GiB go to activations and CUDA graphs): "
            "the engine cannot load the model (CUDA OOM, or no memory left for KV cache blocks)"
            f"{_fitting_parallelism(capacity.weights_bytes, tp, pp, budget, _tp_room(view))}",
            path=path,
            inner_line=inner,
            flag=flag,
            evidence=_evidence(capacity, args),
        )


def _fitting_parallelism(
    weights_bytes: int, tp: int, pp: int, budget_per_gpu: int, tp_room: int
) -> str:
    """A suggestion: the smallest power-of-two TP × PP above the current one whose share of the
    weights leaves a tenth of the budget for the KV cache. TP grows up to `tp_room`
    (tensor parallelism stays inside a node), then PP grows across pods."""
    if budget_per_gpu <= 0:
        return ""
    max_tp = max(tp_room, tp)
    candidates = [(t, pp) for t in (tp * 2, tp * 4, tp * 8) if t <= max_tp]
    candidates += [(max_tp, p) for p in (pp * 2, pp * 4, pp * 8)]
    for new_tp, new_pp in candidates:
        if weights_bytes / (new_tp * new_pp) < budget_per_gpu * 0.9:
            return (
                f"; TP {new_tp} × PP {new_pp} ({new_tp * new_pp} GPUs) would hold them with room "
                "for the KV cache"
            )
    return ""


@check("kv_max_model_len")
def kv_max_model_len(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    capacity, model, args, why = sizing(view)
    long_context = int(params.get("long_context", 32768))
    if capacity is None:
        yield _unsized_full_context(view, long_context) or Outcome(not_evaluated=why)
        return
    if capacity.available_kv_bytes_per_gpu <= 0:
        return  # VLLM008 reports weights that do not fit
    explicit = args.get("max_model_len")
    length = capacity.max_model_len
    path, inner, flag = _at(view, "max_model_len")
    where = _where(capacity)
    if length and capacity.blocks_for(length) > max(capacity.num_gpu_blocks - 1, 0):
        what = (
            f"--max-model-len {length}"
            if explicit is not None
            else f"--max-model-len is unset, so vLLM uses {model.id}'s full {length}-token "
            "context; it"
        )
        yield Outcome(
            message=f"{what} needs {capacity.blocks_for(length)} KV blocks for one sequence, but "
            f"{where} holds {capacity.num_gpu_blocks} blocks ({capacity.tokens_capacity} tokens) "
            f'for {model.id}: vLLM refuses to start ("max seq len ({length}) is larger than the '
            'maximum number of tokens that can be stored in KV cache"); set --max-model-len to '
            f"the longest prompt + output you serve (at most ~{capacity.tokens_capacity})",
            path=path,
            inner_line=inner,
            flag=flag,
            evidence=_evidence(capacity, args),
            severity=Severity.error,  # the engine does not start: not a tuning matter
        )
        return
    if explicit is None and model.context_len and model.context_len > long_context:
        yield Outcome(
            message=f"--max-model-len is unset, so vLLM accepts {model.id}'s full "
            f"{model.context_len}-token context: one such request takes "
            f"{capacity.blocks_for(model.context_len)} of the {capacity.num_gpu_blocks} KV blocks "
            f"on {where} (max concurrency {capacity.max_concurrency(model.context_len):.1f} at "
            "full length), so a few long requests stall everyone else; set --max-model-len to "
            "the longest prompt + output you serve",
            path=path,
            inner_line=inner,
            flag=flag,
            evidence=_evidence(capacity, args),
        )


def _unsized_full_context(view: SubjectView, long_context: int) -> Outcome | None:
    """`--max-model-len` unset on a known long-context model needs no GPU to be judged; only
    whether one full-length sequence fits the cache does (then left unsaid). Said at `info`:
    how much it costs depends on the cache the unknown GPU leaves."""
    invocation = view.invocation
    if invocation is None or "max_model_len" in invocation.explicit:
        return None
    model, _ = served_model(invocation, view.annotations)
    if model is None or not model.context_len or model.context_len <= long_context:
        return None
    path, inner, flag = _at(view, "max_model_len")
    return Outcome(
        message=f"--max-model-len is unset, so vLLM accepts {model.id}'s full "
        f"{model.context_len}-token context: a few requests that long hold most of the KV "
        "cache and the rest queue (the GPU model is unknown, so whether one such sequence fits "
        "at all was not checked); set --max-model-len to the longest prompt + output you serve",
        path=path,
        inner_line=inner,
        flag=flag,
        evidence=(Evidence("knowledge", "model", model.id),),
        severity=Severity.info,
    )


def _where(capacity: Any) -> str:
    """'L4', 'A100-80GB × TP 4', 'H100 × TP 8 × PP 2'."""
    parts = [capacity.gpu_name]
    if capacity.tp > 1:
        parts.append(f"TP {capacity.tp}")
    if capacity.pp > 1:
        parts.append(f"PP {capacity.pp}")
    return " × ".join(parts)


@check("kv_concurrency")
def kv_concurrency(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    capacity, model, args, why = sizing(view)
    if capacity is None:
        yield Outcome(not_evaluated=why)
        return
    if capacity.available_kv_bytes_per_gpu <= 0 or capacity.num_gpu_blocks <= 1:
        return  # VLLM008 reports weights that do not fit
    usable = capacity.num_gpu_blocks - 1
    if capacity.max_model_len and capacity.blocks_for(capacity.max_model_len) > usable:
        return  # the engine does not start: VLLM003 reports it
    share = float(params.get("max_share", 0.7))
    written_len = view.invocation is not None and "max_model_len" in view.invocation.explicit
    try:
        length = request_length(
            view.annotations,
            params,
            capacity.max_model_len,
            written_len,
            bound=int(params.get("bounded_max_model_len", 2048)),
        )
    except ValueError as exc:
        yield Outcome(not_evaluated=str(exc))
        return
    if length is None:
        return  # nothing says how long requests are: no length is assumed
    mean_tokens = length.tokens
    if capacity.max_model_len:
        mean_tokens = min(mean_tokens, capacity.max_model_len)
    seqs = int(args["max_num_seqs"])
    needed_blocks = seqs * capacity.blocks_for(mean_tokens)
    if needed_blocks > share * usable:
        fit = int(share * usable // max(capacity.blocks_for(mean_tokens), 1))
        ratio = needed_blocks / usable
        amount = f"{ratio:.1f}× the" if ratio >= 1 else f"{ratio:.0%} of the"
        written = view.invocation is not None and "max_num_seqs" in view.invocation.explicit
        default = "" if written else " (vLLM's default here)"
        path, inner, flag = _at(view, "max_num_seqs")
        yield Outcome(
            message=f"max_num_seqs {seqs}{default} × ~{mean_tokens} tokens per sequence"
            f" ({length.source})"
            f" needs {needed_blocks} KV blocks, {amount} {usable} blocks "
            f"({capacity.tokens_capacity} tokens) that {_where(capacity)} holds for {model.id}: "
            "under load the cache fills long before the cap, vLLM preempts running sequences "
            "(recompute) and throughput collapses; "
            + (
                f"about {fit} sequences fit in {share:.0%} of the cache"
                if fit > 0
                else f"not one sequence of that length fits in {share:.0%} of the cache"
            ),
            path=path,
            inner_line=inner,
            flag=flag,
            evidence=(
                *_evidence(capacity, args),
                Evidence("assumption", "tokens_per_request", mean_tokens),
                Evidence("assumption", "tokens_per_request_source", length.source),
            ),
        )


@check("weak_gpu_batch")
def weak_gpu_batch(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    invocation = view.invocation
    if invocation is None:
        return
    gpu, why = _engine_gpu(view)
    if gpu is None:
        yield Outcome(not_evaluated=why)
        return
    if not gpu.weak:
        return
    args = invocation.effective(gpu.memory_bytes, gpu_name=gpu.name)
    tokens = args.get("max_num_batched_tokens")
    limit = int(params.get("max_tokens_weak_gpu", 8192))
    if not isinstance(tokens, int) or tokens <= limit:
        return
    model, _ = served_model(invocation, view.annotations)
    step = ""
    if model is not None:
        tp = int(args.get("tensor_parallel_size") or 1)
        seconds = 2 * model.active_params * tokens / (gpu.bf16_flops * tp)
        step = (
            f"; a full prefill step of {model.id} takes at least {seconds:.2f} s at peak "
            "FLOP/s, and every running request's next token waits for it"
        )
    path, inner, flag = _at(view, "max_num_batched_tokens")
    yield Outcome(
        message=f"--max-num-batched-tokens {tokens} on {gpu.name} ({gpu.bf16_flops / 1e12:.0f} "
        f"TFLOP/s {'bf16' if gpu.supports_bf16 else 'fp16'}): one step can carry that many "
        f"prompt tokens{step}",
        path=path,
        inner_line=inner,
        flag=flag,
        evidence=(
            Evidence("knowledge", "gpu", gpu.name),
            Evidence("manifest", "max_num_batched_tokens", tokens),
        ),
    )
