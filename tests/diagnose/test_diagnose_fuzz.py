"""No input crashes diagnose: random text, and real evidence lines cut, shuffled and mixed."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmsched.diagnose.run import run_diagnose
from llmsched.model import ReportKind

DATA = Path(__file__).parents[1] / "evidence" / "data"
REAL_LINES = [
    line
    for path in sorted(DATA.glob("*"))
    if path.suffix in (".txt", ".log", ".md")
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    if line.strip()
]


def _diagnose(text: str) -> None:
    report = run_diagnose(paths=["-"], stdin=io.StringIO(text))
    assert report.kind is ReportKind.diagnose
    if report.verdict is not None and report.verdict["layer"] is None:  # no layer named
        # nothing judged, not everything judged, or not an all-clear (errors, unshown words)
        assert report.verdict["summary"].startswith(
            ("could not judge", "no fault found", "no diagnose rule matched")
        )
    elif report.verdict is not None:
        assert report.verdict["layer"] in ("kubernetes", "ray", "vllm")
        assert 0.0 < report.verdict["confidence"] <= 1.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_random_text(text: str) -> None:
    _diagnose(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(REAL_LINES), max_size=40), st.integers(min_value=0, max_value=200),
       st.randoms(use_true_random=False))
def test_real_lines_cut_and_shuffled(lines: list[str], cut: int, rng) -> None:  # type: ignore[no-untyped-def]
    rng.shuffle(lines)
    mangled = [line[: max(1, len(line) - cut)] if i % 3 == 0 else line for i, line in enumerate(lines)]
    _diagnose("\n".join(mangled))
