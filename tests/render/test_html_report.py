"""The replay's HTML report, written by the real CLI and opened in a real headless browser."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llmsched.render.svg_chart import nice_ticks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "replay", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("html") / "replay.html"
    trace, config = EXAMPLES / "small.trace.jsonl", EXAMPLES / "small.config.json"
    run = _replay(str(trace), "--config", str(config), "--html", str(out), "--no-charts")
    assert run.returncode == 0, run.stderr
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    config = folder / "config.json"
    config.write_text(
        json.dumps({"num_gpu_blocks": 2048, "block_size": 16, "max_num_seqs": 16,
                    "max_num_batched_tokens": 2048, "max_model_len": 8192}),
        encoding="utf-8",
    )  # fmt: skip
    out = folder / "sweep.html"
    run = _replay(
        "--workload", "n=300,rate=0.05,prompt=lognormal:512:4096,output=256,seed=2",
        "--config", str(config),
        "--sweep", "max_num_seqs=2,4,8",
        "--executor", "serial",
        "--html", str(out),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return out


def test_the_page_fetches_nothing_at_view_time(single: str) -> None:
    assert not re.search(r"""(?:src|href)\s*=|url\(|@import|<script""", single, re.I)
    assert not re.search(r"https?://", single)


def test_styles_are_valid_css_not_doubled_braces(single: str) -> None:
    style = single.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "{{" not in style and "}}" not in style
    assert style.count("{") == style.count("}") > 5


def test_the_header_axes_units_legend_and_percentiles_are_there(single: str) -> None:
    for text in ("trace", "small.trace.jsonl", "vLLM scheduler", "config max_num_seqs"):
        assert text in single
    assert single.count(">scheduler step</text>") == 4  # one x-axis label per chart
    for axis in ("requests", "fraction of blocks", "preemptions"):
        assert f">{axis}</text>" in single
    assert ">as configured</text>" in single  # the legend
    for quantile in ("p50", "p90", "p99"):
        assert f"<th>{quantile}</th>" in single
    assert "TTFT (steps)" in single


def test_the_sweep_page_compares_points_and_marks_the_best(sweep: Path) -> None:
    page = sweep.read_text(encoding="utf-8")
    assert page.count("<tr class='best'>") == 1
    for label in ("max_num_seqs=2", "max_num_seqs=4", "max_num_seqs=8"):
        assert f">{label}</text>" in page  # legend of the overlaid runs and the bar labels
    assert "saturat" in page


def test_ticks_cover_the_data() -> None:
    for high in (0.3, 1.0, 7.0, 42_566.0, 99_999.0):
        ticks = nice_ticks(0.0, high)
        assert ticks[0] <= 0.0 and ticks[-1] >= high
        steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
        assert len(steps) == 1


def _browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def test_a_headless_browser_draws_the_page_without_console_errors(
    sweep: Path, tmp_path: Path
) -> None:
    browser = _browser()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must install chromium (see .ci/run)")
        pytest.skip("no chromium here")
    from PIL import Image

    shot = tmp_path / "page.png"
    run = subprocess.run(
        [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--window-size=800,2400", "--enable-logging=stderr", "--v=0",
         f"--screenshot={shot}", sweep.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
    image = Image.open(shot).convert("RGB")
    raw = image.tobytes()
    pixels = [raw[i : i + 3] for i in range(0, len(raw), 3)]
    inked = sum(1 for pixel in pixels if sum(pixel) < 600)
    assert inked > len(pixels) * 0.02  # text, axes, lines and bars, not a blank page
    assert len(set(pixels)) > 20  # several colours: series, best bar, table highlight
