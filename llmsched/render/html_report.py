"""The replay's HTML report: one self-contained page (inline CSS and SVG, no script, nothing
fetched at view time).

A pure function of plain data (:func:`render_page`), built by the replay: an input header
(trace, model, GPU, config, versions), the time series of each run overlaid on shared axes
(a remedy's before and after, or the points of a sweep), latency percentiles per run, the
judgement of a remedy, and the sweep comparison with the best row marked.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.render.svg_chart import PALETTE, Line, bar_chart, line_chart

# series key -> (chart title, y-axis label, fixed y maximum)
SERIES = (
    ("running", "Requests running (vllm:num_requests_running)", "requests", None),
    ("waiting", "Requests waiting (vllm:num_requests_waiting)", "requests", None),
    ("kv_usage", "KV-cache usage (vllm:kv_cache_usage_perc)", "fraction of blocks", 1.0),
    ("preemptions", "Preemptions, cumulative (vllm:num_preemptions)", "preemptions", None),
)
LATENCIES = ("TTFT", "TPOT", "end-to-end", "queue time")
QUANTILES = ("p50", "p90", "p99", "max")

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 780px; margin: 2em auto; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.best td { background: #fde8e8; font-weight: bold; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; font-size: 0.9em; }
dt { color: #555; } dd { margin: 0; font-family: ui-monospace, monospace; }
figure { margin: 1em 0; } .verdict { padding: 0.6em 1em; background: #f4f4f4; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
"""


def render_page(page: Mapping[str, Any]) -> str:
    """The whole page; ``page`` keys: title, header (list of [label, value]), runs, and
    optionally judgement and sweep (see the module doc)."""
    title = str(page.get("title") or "llmsched replay")
    runs: Sequence[Mapping[str, Any]] = page.get("runs") or []
    body = [f"<h1>{_e(title)}</h1>", _header(page.get("header") or [])]
    if page.get("judgement"):
        body.append(_judgement(page["judgement"]))
    if runs:
        body.append("<h2>Over time</h2>")
        body.extend(_series_figures(runs))
        body.append("<h2>Latency percentiles</h2>")
        body.append(_latency_table(runs))
    if page.get("sweep"):
        body.append(_sweep(page["sweep"]))
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )


def _e(value: Any) -> str:
    return html.escape(str(value))


def _header(rows: Sequence[Sequence[Any]]) -> str:
    items = "".join(f"<dt>{_e(label)}</dt><dd>{_e(value)}</dd>" for label, value in rows)
    return f"<h2>Input</h2><dl>{items}</dl>"


def _series_figures(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    unit = runs[0].get("x_unit", "step")
    x_label = "time (s)" if unit == "s" else "scheduler step"
    figures = []
    for key, title, y_label, y_max in SERIES:
        lines = [
            Line(str(run.get("label", "")), run["x"], run["series"][key])
            for run in runs
            if key in run.get("series", {}) and run.get("x")
        ]
        if not lines:
            continue
        chart = line_chart(lines, title=title, x_label=x_label, y_label=y_label, y_max=y_max)
        figures.append(f"<figure>{chart}</figure>")
    return figures


def _latency_table(runs: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{q}</th>" for q in QUANTILES)
    rows = []
    for index, run in enumerate(runs):
        color = PALETTE[index % len(PALETTE)]
        name = f'<span class="swatch" style="background:{color}"></span>{_e(run.get("label", ""))}'
        latency = run.get("latency") or {}
        unit = run.get("unit", "steps")
        for metric in LATENCIES:
            values = latency.get(metric)
            if not values:
                continue
            cells = "".join(f"<td>{_number(values.get(q))}</td>" for q in QUANTILES)
            rows.append(f"<tr><td>{name} {_e(metric)} ({_e(unit)})</td>{cells}</tr>")
    return f"<table><tr><th>run, latency</th>{head}</tr>{''.join(rows)}</table>"


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return _e(value)


def _judgement(judgement: Mapping[str, Any]) -> str:
    verdict = "improves" if judgement.get("improves") else "does not improve"
    better = ", ".join(judgement.get("better") or []) or "nothing"
    worse = ", ".join(judgement.get("worse") or []) or "nothing"
    return (
        f"<h2>Remedy</h2><p class='verdict'>The remedy {verdict} on "
        f"{_e(judgement.get('objective', ''))}: {_e(judgement.get('reason', ''))}.<br>"
        f"Better: {_e(better)}. Worse: {_e(worse)}.</p>"
    )


def _sweep(sweep: Mapping[str, Any]) -> str:
    names: Sequence[str] = sweep.get("names") or []
    points: Sequence[Mapping[str, Any]] = sweep.get("points") or []
    best = sweep.get("best")
    unit = points[0]["outcome"]["unit"] if points else "steps"
    columns = (
        ("ttft_p50", f"TTFT p50 ({unit})"),
        ("ttft_p90", f"TTFT p90 ({unit})"),
        ("e2e_p90", f"end-to-end p90 ({unit})"),
        ("throughput", f"output tokens/{'s' if unit == 's' else 'step'}"),
        ("waiting_mean", "queue (mean)"),
        ("preemptions_per_100", "preemptions/100 requests"),
    )
    head = "".join(f"<th>{_e(n)}</th>" for n in names) + "".join(
        f"<th>{_e(label)}</th>" for _, label in columns
    )
    rows = []
    for index, point in enumerate(points):
        settings = "".join(f"<td>{_e(point['settings'].get(n))}</td>" for n in names)
        cells = "".join(f"<td>{_number(point['outcome'].get(k))}</td>" for k, _ in columns)
        css = " class='best'" if index == best else ""
        rows.append(f"<tr{css}>{settings}{cells}</tr>")
    labels = [", ".join(f"{n}={p['settings'].get(n)}" for n in names) for p in points]
    objective = str(sweep.get("objective", "ttft_p90"))
    chart = bar_chart(
        labels,
        [p["outcome"].get(objective) for p in points],
        title=f"{objective.replace('_', ' ')} by setting (best in red)",
        y_label=unit if objective != "throughput" else "tokens",
        highlight=best,
    )
    return (
        "<h2>Sweep</h2>"
        f"<table><tr>{head}</tr>{''.join(rows)}</table>"
        f"<p class='verdict'>{_e(sweep.get('saturation', ''))}</p>"
        f"<figure>{chart}</figure>"
    )
