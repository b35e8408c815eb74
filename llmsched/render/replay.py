"""`llmsched replay` as text: the summary, the workload estimated from metrics and the sweep
table. Pure functions of the JSON the replay reports (no replay import)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# What the sweep table compares: (key of a point's outcome, column label, unit-bearing).
OUTCOME_COLUMNS = (
    ("ttft_p50", "TTFT p50", True),
    ("ttft_p90", "TTFT p90", True),
    ("e2e_p90", "e2e p90", True),
    ("throughput", "out tok/{unit}", False),
    ("waiting_mean", "queue mean", False),
    ("preemptions_per_100", "preempt/100", False),
)
BEST_MARK = "*"


def sweep_table(
    names: Sequence[str], points: Sequence[Mapping[str, Any]], judged: Mapping[str, Any]
) -> str:
    """One row per grid point: its settings, its KV blocks (unless swept) and what users
    saw, in seconds when a cost model ran (else steps); the best row on the objective is
    marked, and the saturation verdict follows."""
    if not points:
        return "no grid points"
    unit = points[0]["outcome"]["unit"]
    per = "s" if unit == "s" else "step"
    show_blocks = "num_gpu_blocks" not in names
    header = ["", *names, *(["blocks"] if show_blocks else [])]
    header += [
        label.format(unit=per) + (f" ({unit})" if timed else "")
        for _, label, timed in OUTCOME_COLUMNS
    ]
    rows = []
    for index, p in enumerate(points):
        mark = BEST_MARK if index == judged.get("best") else ""
        row = [mark, *(str(p["settings"][n]) for n in names)]
        row += [str(p["num_gpu_blocks"])] if show_blocks else []
        row += [_cell(p["outcome"].get(key)) for key, _, _ in OUTCOME_COLUMNS]
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    objective = str(judged.get("objective", "")).replace("_", " ")
    if judged.get("best") is not None:
        lines.append(f"{BEST_MARK} best on {objective}")
    lines.append(str(judged["saturation"]["sentence"]))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return str(value)


def summary_text(s: Mapping[str, Any]) -> str:
    """The replay summary in eight lines (twelve on the wall clock)."""

    def pct(d: Mapping[str, Any], unit: str = "") -> str:
        if d.get("p50") is None:
            return "-"
        return f"p50 {d['p50']:.4g}{unit}  p90 {d['p90']:.4g}{unit}  p99 {d['p99']:.4g}{unit}"

    lines = [
        f"replay (vLLM {s['vllm_version']} scheduler): {s['num_requests']} requests, "
        f"{s['num_finished']} finished, {s['num_rejected']} rejected",
        f"  steps {s['total_steps']}, scheduled tokens {s['total_scheduled_tokens']}, "
        f"preemptions {s['total_preemptions']} ({s['requests_preempted']} requests)",
        f"  waiting: peak {s['waiting']['peak']}, mean {s['waiting']['mean']:.1f}; "
        f"running: peak {s['running']['peak']}, mean {s['running']['mean']:.1f}",
        f"  KV usage: peak {s['kv_usage']['peak']:.3f}, mean {s['kv_usage']['mean']:.3f}",
        f"  TTFT (steps): {pct(s['ttft_steps'])}",
        f"  end-to-end (steps): {pct(s['e2e_steps'])}",
    ]
    if "ttft_s" in s:
        lines += [
            f"  TTFT: {pct(s['ttft_s'], 's')}",
            f"  TPOT: {pct(s['tpot_s'], 's')}",
            f"  queue time: {pct(s['queue_s'], 's')}",
            f"  throughput: {s['output_tokens_per_s']:.1f} output tokens/s, "
            f"{s['requests_per_s']:.2f} requests/s over {s['total_time_s']:.1f}s",
        ]
    return "\n".join(lines)


def workload_text(w: Mapping[str, Any]) -> str:
    """The workload estimated from metrics: rate, sampled lengths, notes."""
    engines = f", {w['engines']} engines" if w["engines"] > 1 else ""
    lines = [
        f"workload from vLLM metrics ({w['interval_s']:g}s between scrapes{engines}): "
        f"{w['rate_per_s']:.3g} requests/s ({w['rate_source']}, "
        f"{w['requests_finished']:g} finished); {w['num_requests']} requests, seed {w['seed']}",
    ]
    for name in ("prompt", "output"):
        part = w[name]
        s = part.get("sampled", {})
        observed = part["observed_mean"]
        lines.append(
            f"  {name} tokens: p50 {s.get('p50', 0):g}  p90 {s.get('p90', 0):g}  "
            f"p99 {s.get('p99', 0):g}  max {s.get('max', 0):g}  ({part['fit']} from the "
            f"{part['source']} of {part['fitted_on']:g} requests"
            + (f", observed mean {observed:g})" if observed is not None else ")")
        )
    lines += [f"  note: {n}" for n in w["notes"]]
    return "\n".join(lines)


def fleet_text(s: Mapping[str, Any]) -> str:
    """A fleet replay: the fleet's summary, then one line per replica."""
    lines = [
        f"fleet of {len(s['replicas'])} replicas behind the {s['router']} router",
        summary_text(s),
    ]
    for r in s["replicas"]:
        ttft = (r.get("ttft_s") or r["ttft_steps"])["p90"]
        unit = "s" if "ttft_s" in r else " steps"
        shown = "-" if ttft is None else f"{ttft:.4g}{unit}"
        gpu = f" ({r['gpu']})" if r.get("gpu") else ""
        lines.append(
            f"  replica {r['name']}{gpu}: {r['num_routed']} requests, "
            f"{r['total_preemptions']} preemptions, TTFT p90 {shown}"
        )
    return "\n".join(lines)
