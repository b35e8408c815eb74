"""`llmsched replay` as text: the summary, the workload estimated from metrics and the sweep
table. Pure functions of the JSON the replay reports (no replay import)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# What the sweep table compares: (dotted key into a point's summary, column label).
COMPARE_COLUMNS = (
    ("total_steps", "steps"),
    ("total_preemptions", "preempt"),
    ("waiting.peak", "wait peak"),
    ("kv_usage.mean", "kv mean"),
    ("ttft_steps.p50", "ttft p50"),
    ("ttft_steps.p99", "ttft p99"),
    ("e2e_steps.p50", "e2e p50"),
)


def lookup(point: Mapping[str, Any], dotted: str) -> Any:
    value: Any = point
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def sweep_table(names: Sequence[str], points: Sequence[Mapping[str, Any]]) -> str:
    """One row per grid point: its settings, its KV blocks and COMPARE_COLUMNS, padded to
    line up."""
    columns = COMPARE_COLUMNS
    header = [*names, "blocks", *(label for _, label in columns)]
    rows = []
    for p in points:
        row = [str(p["settings"][n]) for n in names] + [str(p["num_gpu_blocks"])]
        for key, _ in columns:
            v = lookup(p, key)
            row.append("-" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v)))
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


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
