"""Charts of a replay's time series: terminal (unicode bars) and self-contained HTML/SVG."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from llmsched.replay.metrics import (
    KV_USAGE,
    NUM_PREEMPTIONS,
    NUM_RUNNING,
    NUM_WAITING,
    ReplayResult,
)

BARS = " ▁▂▃▄▅▆▇█"
CHARTS = (
    (NUM_RUNNING, "running"),
    (NUM_WAITING, "waiting"),
    (KV_USAGE, "KV usage"),
    (NUM_PREEMPTIONS, "preemptions (cumulative)"),
)


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


def terminal_charts(result: ReplayResult, width: int = 60) -> str:
    series = result.series.by_metric_name()
    lines = [f"over {result.total_steps} steps:"]
    for name, label in CHARTS:
        values = series[name]
        top = 1.0 if name == KV_USAGE else None
        peak = max(values, default=0.0)
        shown = f"{peak:.2f}" if name == KV_USAGE else f"{peak:.0f}"
        lines.append(f"  {label:<26} {sparkline(values, width, top)}  max {shown}")
    return "\n".join(lines)


def _svg_chart(values: Sequence[float], label: str, top: float | None, width: int = 720) -> str:
    data = downsample(values, width)
    height = 110
    peak = top if top is not None else max(data, default=0.0)
    peak = peak if peak > 0 else 1.0
    step = width / max(1, len(data) - 1)
    points = " ".join(
        f"{i * step:.1f},{height - 10 - (height - 20) * v / peak:.1f}" for i, v in enumerate(data)
    )
    return (
        f"<figure><figcaption>{html.escape(label)} (max {max(values, default=0):.3g})"
        f'</figcaption><svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(label)}"><rect width="100%" height="100%" '
        f'fill="#fafafa"/><polyline fill="none" stroke="#1f77b4" stroke-width="1.5" '
        f'points="{points}"/></svg></figure>'
    )


def html_report(result: ReplayResult, title: str = "llmsched replay") -> str:
    """One self-contained page: the summary and the same charts, no external assets."""
    series = result.series.by_metric_name()
    figures = "\n".join(
        _svg_chart(series[name], f"{label} [{name}]", 1.0 if name == KV_USAGE else None)
        for name, label in CHARTS
    )
    summary: dict[str, Any] = result.summary()
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;"
        "max-width:760px;margin:2em auto}}pre{{background:#f4f4f4;padding:1em;"
        "overflow:auto}}figure{{margin:1em 0}}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{figures}<h2>Summary</h2><pre>"
        f"{html.escape(json.dumps(summary, indent=2))}</pre></body></html>\n"
    )
