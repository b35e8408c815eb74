"""The bundled examples (the README's first command) break every lint rule, as the README says."""

from __future__ import annotations

from pathlib import Path

from llmsched.config import Config
from llmsched.engine.lint import exit_code, run_lint

ROOT = Path(__file__).resolve().parents[1]


def test_examples_fire_every_lint_rule() -> None:
    report = run_lint([str(ROOT / "examples")], Config())
    assert not report.errors
    fired = {f.rule for f in report.findings}
    expected = {p.stem.split("-", 1)[0] for p in (ROOT / "rules" / "lint").glob("*.yaml")}
    assert expected - fired == set()
    assert exit_code(report, "error") == 1


def test_bundled_incidents_name_the_right_layer() -> None:
    from llmsched.diagnose.confirm import confirm_by_replay
    from llmsched.diagnose.run import run_diagnose
    from llmsched.snapshot import Snapshot

    expected = {"preemption-storm": ("vllm", "DVLLM02"), "ray-zero-gpus": ("ray", "DRAY02"),
                "tainted-gpu-pool": ("kubernetes", "DK8S03")}
    for name, (layer, rule) in expected.items():
        snapshot = Snapshot.load(ROOT / "examples" / "incidents" / name)
        report = run_diagnose(snapshots=[snapshot], confirm=confirm_by_replay)
        assert report.verdict is not None, name
        assert (report.verdict["layer"], report.verdict["rule"]) == (layer, rule), report.verdict
    storm = run_diagnose(snapshots=[Snapshot.load(ROOT / "examples/incidents/preemption-storm")],
                         confirm=confirm_by_replay)
    top = storm.findings[0]
    assert top.confirmation is not None and top.confirmation["status"] == "confirmed"
    remedy = top.confirmation["remedy"]
    # judged on latency and throughput: the tried settings cut preemptions but make users
    # wait longer, and the replica cannot keep up at any of them
    assert "preemptions per 100 requests" in remedy["judgement"]["better"]
    assert not remedy["improves"] and remedy["saturation"]["saturated"]
    assert remedy["note"].startswith("none of the tried settings")
    assert "add replicas" in remedy["note"]
