"""run_diagnose end to end: the cycle collector is paused while it runs, and restored."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from llmsched.diagnose import run
from llmsched.evidence.observations import SniffResult


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_is_paused_while_diagnosing_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    seen: list[bool] = []
    real = run.sniff_paths

    def sniff(paths: list[str], stdin: object = None) -> SniffResult:
        seen.append(gc.isenabled())
        return real(paths, stdin)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "sniff_paths", sniff)
    log = tmp_path / "events.txt"
    log.write_text("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n", encoding="utf-8")
    (gc.enable if enabled else gc.disable)()
    try:
        report = run.run_diagnose(paths=[str(log)])
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert seen == [False]
    assert [f.rule for f in report.findings] == ["DK8S01"]
