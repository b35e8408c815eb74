"""Whatever is pasted, sniffing never raises and always accounts for every input."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sniffing import DATA

from llmsched.evidence.sniff import sniff_text

SAMPLES = sorted(
    p.read_text() for p in DATA.iterdir() if p.suffix in (".log", ".txt", ".md", ".json", ".yaml")
)
FRAGMENTS = [line for sample in SAMPLES for line in sample.splitlines()]


def _check(text: str) -> None:
    result = sniff_text(text, "fuzz")
    (source,) = result.sources
    assert source["lines"] == len(text.splitlines())
    assert source["observations"] == len(result.observations)
    for observation in result.observations:
        assert observation.location is not None
        assert 1 <= (observation.location.line or 0) <= max(1, source["lines"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_random_text(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary().map(lambda b: b.decode("latin-1")))
def test_random_bytes(text: str) -> None:
    _check(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=40))
def test_shuffled_real_lines(lines: list[str]) -> None:
    _check("\n".join(lines))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.integers(min_value=0, max_value=5000), st.text(max_size=5))
def test_truncated_and_spliced_samples(sample: str, cut: int, junk: str) -> None:
    _check(sample[:cut] + junk + sample[cut:])
    _check(sample[:cut])


def test_huge_line() -> None:
    line = "0/4 nodes are available: " + "9 Insufficient nvidia.com/gpu, " * 200_000
    _check(line + "\n" + "{" * 100_000 + "\n")
