"""SVG charts: round ticks that cover the data, points inside the plot, a legend per line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from llmsched.render.svg_chart import (
    HEIGHT,
    LEFT,
    RIGHT,
    WIDTH,
    Line,
    bar_chart,
    downsample,
    line_chart,
    nice_ticks,
    tick_label,
)


def test_ticks_are_round_numbers() -> None:
    assert nice_ticks(0, 42_566) == [0, 10_000, 20_000, 30_000, 40_000, 50_000]
    assert nice_ticks(0, 0.3, 4) == [0.0, 0.1, 0.2, 0.3]
    assert nice_ticks(3, 7) == [3.0, 4.0, 5.0, 6.0, 7.0]
    assert nice_ticks(5, 5)[-1] >= 5 and len(nice_ticks(5, 5)) >= 2


def test_tick_labels_stay_short() -> None:
    assert [tick_label(v) for v in (0, 0.25, 3, 40_000)] == ["0", "0.25", "3", "40k"]


def test_downsampling_keeps_the_spike() -> None:
    y = [0.0] * 10_000
    y[5_432] = 9.0
    xs, ys = downsample(list(range(10_000)), y, 100)
    assert len(xs) == len(ys) == 100 and max(ys) == 9.0


def _points(svg: str) -> list[tuple[float, float]]:
    out = []
    for match in re.finditer(r'points="([^"]+)"', svg):
        out += [tuple(map(float, p.split(","))) for p in match.group(1).split()]
    return out  # type: ignore[return-value]


def test_a_line_chart_is_valid_svg_with_every_point_inside_the_plot() -> None:
    svg = line_chart(
        [Line("before", [0, 5, 10, 42_566], [0, 3, 8, 2]), Line("after", [0, 10], [1, 1])],
        title="Requests running", x_label="scheduler step", y_label="requests",
    )  # fmt: skip
    root = ET.fromstring(svg)
    assert root.tag == "svg"
    texts = [t.text for t in root.iter("text")]
    assert {"Requests running", "scheduler step", "requests", "before", "after"} <= set(texts)
    for x, y in _points(svg):
        assert LEFT <= x <= WIDTH - RIGHT and 0 <= y <= HEIGHT


def test_a_bar_chart_marks_the_highlighted_bar() -> None:
    svg = bar_chart(["a", "b", "c"], [3.0, None, 1.0], title="TTFT", y_label="s", highlight=2)
    root = ET.fromstring(svg)
    bars = [r for r in root.iter("rect") if r.get("height") != str(HEIGHT)]
    assert len(bars) == 2  # no bar for the unmeasured point
    assert len({r.get("fill") for r in bars}) == 2
