"""Confirm a replica on a weaker GPU (DK8S04) by a heterogeneous fleet replay.

The finding's pod and its running GPU siblings become the replicas of one fleet
(`llmsched.replay.fleet`), each on its node's GPU (`nvidia.com/gpu.product`) with its own
scheduler config (the KV blocks its vLLM reports, else those derived for the card) and its
own roofline cost model. The workload is the fleet's, estimated from the replicas' /metrics
(`llmsched.replay.estimate`, as `replay --workload-from-metrics`), replayed on the wall
clock. A Kubernetes Service spreads requests evenly (kube-proxy's iptables mode picks an
endpoint at random with equal probability, kubernetes.io docs/reference/networking/
virtual-ips); `round-robin` is its deterministic stand-in. The replay must show the weaker
replica's TTFT or end-to-end p90 above every other replica's to be *confirmed*; then two
remedies are replayed on the same requests and judged on what users feel
(`llmsched.replay.judge`): the fleet without the weaker replica(s), and a load-aware router
(AIBrix least-request) in front of them all.

What the evidence does not tell (no workload, a GPU or model not in the catalogues) is said,
not guessed. Bounded: at most `MAX_REPLICAS` replicas, three fleets of the same trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from llmsched.diagnose.confirm_replicas import MAX_REPLICAS
from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.facts.pods import pod_key
from llmsched.errors import InputFileError, LlmschedError
from llmsched.knowledge.gpus import lookup_gpu
from llmsched.knowledge.models import lookup_model
from llmsched.replay.cost_model import roofline_for
from llmsched.replay.derive import EngineSetup, derive_config
from llmsched.replay.estimate import WorkloadEstimate
from llmsched.replay.fleet import FleetResult, ReplicaSpec, run_fleet
from llmsched.replay.judge import Objective, Outcome, compare, outcome
from llmsched.replay.synthetic import generate_workload
from llmsched.replay.workload import parse_config

# diagnose's estimator (`confirm.workload_estimate`): an endpoint's facts -> its workload, or why not
Estimator = Callable[[Mapping[str, Any]], "WorkloadEstimate | str"]

SERVICE_ROUTER = "round-robin"
LOAD_AWARE_ROUTER = "least-request"
# engine arguments the endpoint facts carry (from the logged args and /metrics)
_ENGINE_ARGS = (
    "max_num_seqs",
    "max_model_len",
    "max_num_batched_tokens",
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "block_size",
)
_PERCENTILES = ("ttft_p50", "ttft_p90", "ttft_p99", "e2e_p50", "e2e_p90")


@dataclass(frozen=True)
class Replica:
    pod: str
    gpu: str  # the catalogue's name
    product: str  # the node label's value
    endpoint: Mapping[str, Any] | None  # its vLLM endpoint's facts, when scraped
    weaker: bool


def confirm_weaker_gpu(
    finding_pod: Subject,
    facts: Facts,
    objective: Objective,
    requests_cap: int,
    estimate_workload: Estimator,
) -> dict[str, Any]:
    """The confirmation of DK8S04 for `finding_pod` (see the module doc).
    `estimate_workload(endpoint data)` is diagnose's estimator: a WorkloadEstimate or why not."""
    found = _replicas(finding_pod, facts)
    if isinstance(found, str):
        return {"status": "not_applicable", "reason": found}
    replicas = found
    workload = _workload(replicas, estimate_workload)
    if isinstance(workload, str):
        return {"status": "not_applicable", "reason": workload}
    estimate, assumptions = workload
    model = next(
        (str(r.endpoint["model"]) for r in replicas if r.endpoint and r.endpoint.get("model")), None
    )
    if model is None or lookup_model(model) is None:
        why = f"model {model!r} is not in the catalogue" if model else "no replica reports it"
        return {"status": "not_applicable", "reason": f"the model is unknown ({why})"}
    try:
        specs = [_spec(r, model, replicas, assumptions) for r in replicas]
        trace = generate_workload(replace(estimate.spec, num_requests=requests_cap)).requests
        service = run_fleet(trace, specs, SERVICE_ROUTER, wall_clock=True)
        stronger = [s for s, r in zip(specs, replicas, strict=True) if not r.weaker]
        without = run_fleet(trace, stronger, SERVICE_ROUTER, wall_clock=True)
        load_aware = run_fleet(trace, specs, LOAD_AWARE_ROUTER, wall_clock=True)
    except (InputFileError, LlmschedError, ValueError) as exc:
        return {"status": "not_applicable", "reason": f"replay could not run: {exc}"}
    per_replica = _per_replica(service, replicas)
    replayed = _contrast(per_replica, replicas)
    if replayed is None:
        return {"status": "not_applicable", "reason": "no request finished on some replica"}
    before = service.outcome()
    remedies = [
        _remedy(f"remove the {_weak_names(replicas)} replica(s)", without, before, objective),
        _remedy(
            f"route by outstanding requests ({LOAD_AWARE_ROUTER})", load_aware, before, objective
        ),
    ]
    out: dict[str, Any] = {
        "kind": "fleet",
        "replayed": replayed,
        "per_replica": per_replica,
        "workload": {
            "requests_per_s": round(estimate.spec.rate, 3),
            "mean_prompt_tokens": round(estimate.spec.prompt.expected(), 1),
            "mean_output_tokens": round(estimate.spec.output.expected(), 1),
            "requests": len(trace),
            "model": model,
        },
        "router": SERVICE_ROUTER,
        "fleet": _numbers(before),
        "remedies": remedies,
    }
    if assumptions:
        out["assumptions"] = assumptions
    return out


def _replicas(finding_pod: Subject, facts: Facts) -> list[Replica] | str:
    pod = finding_pod.data
    weaker_product = pod.get("gpu_product")
    siblings = [
        s
        for s in pod.get("siblings") or []
        if s.get("phase") == "Running" and s.get("gpu_limit") and not s.get("deleting")
    ]
    if len(siblings) + 1 > MAX_REPLICAS:
        return (
            f"{pod.get('owner')} has {len(siblings) + 1} GPU replicas, more than the "
            f"{MAX_REPLICAS} a confirmation replays"
        )
    out = []
    for data in [pod, *siblings]:
        product = data.get("gpu_product")
        if not product:
            return (
                f"the GPU of pod {data['name']} is unknown (its node has no nvidia.com/gpu.product)"
            )
        gpu = lookup_gpu(str(product))
        if gpu is None:
            return f"GPU {product!r} of pod {data['name']} is not in the GPU catalogue"
        subject = facts.pods.get(pod_key(pod.get("namespace"), data["name"]))
        key = subject.data.get("engine_endpoint") if subject is not None else None
        endpoint = facts.endpoints[key].data if key in facts.endpoints else None
        out.append(
            Replica(str(data["name"]), gpu.name, str(product), endpoint, product == weaker_product)
        )
    if all(r.weaker for r in out):
        return "every replica runs on the same GPU model"
    return out


def _workload(
    replicas: Sequence[Replica], estimate_workload: Estimator
) -> tuple[WorkloadEstimate, list[str]] | str:
    """The fleet's workload: the lengths of the busiest scraped replica, the summed request
    rate of the replicas whose /metrics give one (scaled up to the whole fleet when some do
    not, which is said)."""
    seen: list[tuple[Replica, WorkloadEstimate]] = []
    idle = 0  # replicas whose counters say no request finished: a rate of 0, not unknown
    whys = []
    for r in replicas:
        if r.endpoint is None:
            continue
        found = estimate_workload(r.endpoint)
        if not isinstance(found, str):
            seen.append((r, found))
        elif r.endpoint.get("request_rate") == 0:
            idle += 1
        else:
            whys.append(f"{r.pod}: {found}")
    if not seen:
        detail = f" ({'; '.join(whys)})" if whys else ""
        return (
            "no workload to replay: no replica's vLLM /metrics shows its request rate and "
            f"lengths{detail}"
        )
    rate = sum(e.spec.rate for _, e in seen)
    assumptions = []
    if len(seen) + idle < len(replicas):
        rate *= (len(replicas) - idle) / len(seen)
        unseen = [r.pod for r in replicas if r.endpoint is None]
        assumptions.append(
            f"the request rate of {len(replicas) - len(seen) - idle} replica(s) without a "
            "workload in "
            "their /metrics is taken as the others' (a Service spreads requests evenly): "
            + "; ".join([*(f"{pod}: not scraped" for pod in unseen), *whys])
        )
    busiest = max(seen, key=lambda item: item[1].spec.rate)[1]
    return replace(busiest, spec=replace(busiest.spec, rate=rate)), assumptions


def _spec(
    replica: Replica, model: str, replicas: Sequence[Replica], assumptions: list[str]
) -> ReplicaSpec:
    """Its config (the deployment's logged args on its GPU; its own reported KV blocks win
    over derived ones) and its cost model."""
    args_from = next((r.endpoint for r in replicas if r.endpoint), {}) or {}
    explicit = {k: args_from[k] for k in _ENGINE_ARGS if args_from.get(k) is not None}
    version = args_from.get("version")
    engine = EngineSetup(model, replica.gpu, explicit, str(version) if version else None)
    config = derive_config(engine)
    blocks = (replica.endpoint or {}).get("num_gpu_blocks")
    if blocks:
        config["num_gpu_blocks"] = int(blocks)
    else:
        assumptions.append(
            f"{replica.pod}: KV blocks derived for {replica.gpu} ({config['num_gpu_blocks']}; "
            "its vLLM reported none)"
        )
    tp = int(explicit.get("tensor_parallel_size") or 1)
    return ReplicaSpec(
        replica.pod,
        parse_config(config, "--replica"),
        roofline_for(replica.gpu, model, tp),
        replica.gpu,
    )


def _per_replica(fleet: FleetResult, replicas: Sequence[Replica]) -> list[dict[str, Any]]:
    out = []
    for r, result, routed in zip(replicas, fleet.replicas, fleet.routed, strict=True):
        entry: dict[str, Any] = {
            "pod": r.pod,
            "gpu": r.product,
            "weaker": r.weaker,
            "routed": len(routed),
            **_numbers(outcome(result)),
        }
        if r.endpoint and r.endpoint.get("ttft_p90") is not None:
            entry["observed_ttft_p90"] = r.endpoint["ttft_p90"]
        out.append(entry)
    return out


def _contrast(
    per_replica: Sequence[Mapping[str, Any]], replicas: Sequence[Replica]
) -> dict[str, Any] | None:
    """What the rule's `reproduces` reads: the weaker replicas' worst percentiles and the
    other replicas' worst."""
    out: dict[str, Any] = {}
    for side, weaker in (("weaker", True), ("stronger", False)):
        group = [p for p, r in zip(per_replica, replicas, strict=True) if r.weaker == weaker]
        for metric in ("ttft_p90", "e2e_p90"):
            values = [p[metric] for p in group]
            if any(v is None for v in values):
                return None
            out[f"{side}_{metric}"] = max(values)
    out["weaker_gpu"] = next(r.product for r in replicas if r.weaker)
    out["stronger_gpus"] = sorted({r.product for r in replicas if not r.weaker})
    return out


def _remedy(
    change: str, fleet: FleetResult, before: Outcome, objective: Objective
) -> dict[str, Any]:
    judgement = compare(before, fleet.outcome(), objective)
    return {
        "change": change,
        "improves": judgement.improves,
        "judgement": judgement.to_dict(),
        "replayed": _numbers(fleet.outcome()),
        "routed": {
            spec.name: len(ids) for spec, ids in zip(fleet.specs, fleet.routed, strict=True)
        },
    }


def _numbers(o: Outcome) -> dict[str, Any]:
    out: dict[str, Any] = {"unit": o.unit}
    for metric in _PERCENTILES:
        value = getattr(o, metric)
        out[metric] = None if value is None else round(value, 3)
    out["throughput"] = round(o.throughput, 1)
    out["waiting_mean"] = round(o.waiting_mean, 2)
    out["num_finished"] = o.num_finished
    return out


def _weak_names(replicas: Sequence[Replica]) -> str:
    return next(r.product for r in replicas if r.weaker)


def sentence(confirmation: Mapping[str, Any]) -> str:
    """One line for the text report: the per-GPU contrast and each remedy's effect."""
    replayed = confirmation["replayed"]
    head = (
        f"{confirmation['status']}: behind an even split ({confirmation['router']}), the "
        f"{replayed['weaker_gpu']} replica has TTFT p90 {_s(replayed['weaker_ttft_p90'])} and "
        f"end-to-end p90 {_s(replayed['weaker_e2e_p90'])} against at most "
        f"{_s(replayed['stronger_ttft_p90'])} and {_s(replayed['stronger_e2e_p90'])} on "
        f"{', '.join(replayed['stronger_gpus'])}"
    )
    parts = [head]
    for remedy in confirmation["remedies"]:
        j = remedy["judgement"]
        goal = j["changes"][j["objective"]]
        verdict = "helps" if remedy["improves"] else "does not help"
        parts.append(
            f"{remedy['change']} {verdict} (fleet {j['objective'].replace('_', ' ')} "
            f"{_s(goal['before'])} -> {_s(goal['after'])})"
        )
    w = confirmation["workload"]
    parts.append(f"{w['requests']} requests at {w['requests_per_s']} req/s replayed")
    if confirmation.get("assumptions"):
        parts.append("assumed: " + "; ".join(confirmation["assumptions"]))
    return "; ".join(parts)


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g} s"
