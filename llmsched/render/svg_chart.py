"""Inline SVG charts with axes, ticks, units and a legend: no script, no external asset.

Pure functions of numbers; the HTML report places them. Ticks are "nice" numbers (1, 2, 5
times a power of ten), as plotting libraries choose them.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 28, 44
MAX_POINTS = 720  # one per pixel column: spikes kept by the max of each bucket
Scale = Callable[[float], float]


@dataclass(frozen=True)
class Line:
    label: str
    x: Sequence[float]
    y: Sequence[float]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 10_000:
        return f"{value / 1000:g}k"
    if abs(value) >= 1:
        return f"{value:g}"
    return f"{value:.2g}"


def downsample(
    x: Sequence[float], y: Sequence[float], points: int = MAX_POINTS
) -> tuple[list[float], list[float]]:
    """At most ``points`` (x, y) pairs: the max of each bucket, so spikes survive."""
    if len(y) <= points:
        return list(x), list(y)
    xs, ys = [], []
    for i in range(points):
        lo = i * len(y) // points
        hi = max(lo + 1, (i + 1) * len(y) // points)
        xs.append(x[hi - 1])
        ys.append(max(y[lo:hi]))
    return xs, ys


def line_chart(
    lines: Sequence[Line],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_max: float | None = None,
) -> str:
    """A line chart of one or more series sharing axes; the legend names each series."""
    series = [downsample(line.x, line.y) for line in lines]
    all_x = [v for xs, _ in series for v in xs]
    all_y = [v for _, ys in series for v in ys]
    x_ticks = nice_ticks(min(all_x, default=0.0), max(all_x, default=1.0))
    top = y_max if y_max is not None else max(all_y, default=1.0)
    y_ticks = nice_ticks(0.0, top if top > 0 else 1.0, 4)
    x0, x1, y1 = x_ticks[0], x_ticks[-1], y_ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(value: float) -> float:
        return LEFT + plot_w * (value - x0) / ((x1 - x0) or 1.0)

    def py(value: float) -> float:
        return TOP + plot_h * (1 - value / (y1 or 1.0))

    parts = [_frame(title)]
    parts += _axes(x_ticks, y_ticks, px, py, x_label, y_label)
    for index, (xs, ys) in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        points = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(xs, ys, strict=True))
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{points}"/>'
        )
    parts.append(_legend([line.label for line in lines]))
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(labels: Sequence[str], values: Sequence[float | None], *, title: str,
              y_label: str, highlight: int | None = None) -> str:  # fmt: skip
    """One bar per label; ``highlight`` marks one bar (the best setting)."""
    measured = [v for v in values if v is not None]
    y_ticks = nice_ticks(0.0, max(measured, default=1.0) or 1.0, 4)
    y1 = y_ticks[-1] or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(labels))

    def py(value: float) -> float:
        return TOP + plot_h * (1 - value / y1)

    parts = [_frame(title)]
    parts += _y_axis(y_ticks, py, y_label)
    parts.append(_axis_line(LEFT, TOP + plot_h, WIDTH - RIGHT, TOP + plot_h))
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        x = LEFT + slot * index + slot * 0.15
        color = PALETTE[1] if index == highlight else PALETTE[0]
        if value is not None:
            parts.append(
                f'<rect x="{x:.1f}" y="{py(value):.1f}" width="{slot * 0.7:.1f}" '
                f'height="{TOP + plot_h - py(value):.1f}" fill="{color}"/>'
            )
        parts.append(
            f'<text x="{x + slot * 0.35:.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" '
            f'font-size="11">{html.escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _frame(title: str) -> str:
    return (
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{html.escape(title)}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>'
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>'
    )


def _axis_line(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#444"/>'


def _y_axis(ticks: Sequence[float], py: Scale, label: str) -> list[str]:
    parts = [_axis_line(LEFT, TOP, LEFT, HEIGHT - BOTTOM)]
    for tick in ticks:
        y = py(tick)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#e5e5e5"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{tick_label(tick)}</text>"
        )
    middle = TOP + (HEIGHT - TOP - BOTTOM) / 2
    parts.append(
        f'<text x="14" y="{middle:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle:.1f})">{html.escape(label)}</text>'
    )
    return parts


def _axes(x_ticks: Sequence[float], y_ticks: Sequence[float], px: Scale, py: Scale,
          x_label: str, y_label: str) -> list[str]:  # fmt: skip
    parts = _y_axis(y_ticks, py, y_label)
    base = HEIGHT - BOTTOM
    parts.append(_axis_line(LEFT, base, WIDTH - RIGHT, base))
    for tick in x_ticks:
        x = px(tick)
        parts.append(
            f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#444"/>'
            f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle" font-size="11">'
            f"{tick_label(tick)}</text>"
        )
    parts.append(
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.1f}" y="{HEIGHT - 6}" '
        f'text-anchor="middle" font-size="11">{html.escape(x_label)}</text>'
    )
    return parts


def _legend(labels: Sequence[str]) -> str:
    parts = []
    x = WIDTH - RIGHT
    for index in reversed(range(len(labels))):
        text = html.escape(labels[index])
        x -= 18 + 7 * len(labels[index])
        color = PALETTE[index % len(PALETTE)]
        parts.append(
            f'<rect x="{x:.0f}" y="8" width="12" height="3" fill="{color}"/>'
            f'<text x="{x + 16:.0f}" y="13" font-size="11">{text}</text>'
        )
    return "".join(parts)
