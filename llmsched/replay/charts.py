"""A replay's time series for people: terminal charts with a scale and a time axis, and the
plain data the HTML report (`llmsched.render.html_report`) draws."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmsched import __version__
from llmsched.replay.metrics import (
    KV_USAGE,
    NUM_PREEMPTIONS,
    NUM_RUNNING,
    NUM_WAITING,
    ReplayResult,
)

BARS = " ▁▂▃▄▅▆▇█"
# metric name -> (terminal label, key in the report's series)
CHARTS = (
    (NUM_RUNNING, "running", "running"),
    (NUM_WAITING, "waiting", "waiting"),
    (KV_USAGE, "KV usage", "kv_usage"),
    (NUM_PREEMPTIONS, "preemptions (cumulative)", "preemptions"),
)
SERIES_POINTS = 720  # the report's charts are 720 px wide: more points draw nothing new


def downsample(values: Sequence[float], width: int) -> list[float]:
    """Max over equal buckets, so spikes survive."""
    if len(values) <= width:
        return list(values)
    out = []
    for i in range(width):
        lo = i * len(values) // width
        hi = max(lo + 1, (i + 1) * len(values) // width)
        out.append(max(values[lo:hi]))
    return out


def sparkline(values: Sequence[float], width: int = 60, top: float | None = None) -> str:
    data = downsample(values, width)
    if not data:
        return ""
    peak = top if top is not None else max(data)
    if peak <= 0:
        return BARS[0] * len(data)
    return "".join(BARS[min(8, round(8 * v / peak))] for v in data)


def _x_axis(result: ReplayResult) -> tuple[list[float], str]:
    series = result.series
    if series.time and len(series.time) == len(series.step):
        return list(series.time), "s"
    return [float(s) for s in series.step], "step"


def _scale(value: float, kv: bool) -> str:
    return f"{value:.2f}" if kv else f"{value:.0f}"


def terminal_charts(result: ReplayResult, width: int = 60) -> str:
    """One sparkline per gauge with its scale (0 to the top the bars are drawn against),
    and a time axis under them from the first to the last step."""
    series = result.series.by_metric_name()
    x, unit = _x_axis(result)
    lines = []
    label_width = max(len(label) for _, label, _ in CHARTS)
    for name, label, _ in CHARTS:
        values = series[name]
        kv = name == KV_USAGE
        top = 1.0 if kv else max(values, default=0.0)
        scale = f"0–{_scale(top, kv)}" + (f", peak {max(values, default=0.0):.2f}" if kv else "")
        lines.append(
            f"  {label:<{label_width}} {sparkline(values, width, top if kv else None)}  {scale}"
        )
    if x:
        start = _axis_value(x[0], unit)
        end = _axis_value(x[-1], unit)
        shown = min(width, len(x))
        gap = max(1, shown - len(start) - len(end))
        lines.append(f"  {'':<{label_width}} {start}{' ' * gap}{end}")
    return "\n".join(lines)


def _axis_value(value: float, unit: str) -> str:
    return f"{value:.1f}s" if unit == "s" else f"step {value:.0f}"


def run_view(result: ReplayResult, label: str) -> dict[str, Any]:
    """One run as the HTML report draws it: x axis, the four series, latency percentiles."""
    x, unit = _x_axis(result)
    by_name = result.series.by_metric_name()
    points = min(SERIES_POINTS, len(x))
    summary = result.summary()
    wall = "ttft_s" in summary
    latency = {
        "TTFT": summary["ttft_s" if wall else "ttft_steps"],
        "end-to-end": summary["e2e_s" if wall else "e2e_steps"],
    }
    if wall:
        latency["TPOT"] = summary["tpot_s"]
        latency["queue time"] = summary["queue_s"]
    return {
        "label": label,
        "x_unit": unit,
        "x": _pick(x, points),
        "series": {key: downsample(by_name[name], points) for name, _, key in CHARTS},
        "unit": "s" if wall else "steps",
        "latency": latency,
    }


def _pick(x: Sequence[float], points: int) -> list[float]:
    """The x value at the end of each bucket `downsample` forms."""
    if len(x) <= points:
        return list(x)
    return [x[max(1, (i + 1) * len(x) // points) - 1] for i in range(points)]


def page(
    title: str,
    header: Sequence[tuple[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    *,
    judgement: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "title": title,
        "header": [list(row) for row in header],
        "runs": list(runs),
        "judgement": judgement,
        "sweep": sweep,
    }


def header_rows(
    trace_path: str, num_requests: int, config: Mapping[str, Any], vllm_version: str,
    extra: Sequence[tuple[str, Any]] = (),
) -> list[tuple[str, Any]]:  # fmt: skip
    """The report's input header: what was replayed, under which scheduler and config."""
    rows: list[tuple[str, Any]] = [
        ("trace", trace_path),
        ("requests", num_requests),
        *extra,
        ("vLLM scheduler", vllm_version),
        ("llmsched", __version__),
    ]
    rows += [(f"config {key}", value) for key, value in config.items()]
    return rows
