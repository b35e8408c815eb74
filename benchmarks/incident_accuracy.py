"""Diagnose accuracy on the real-incident corpus, by hand: `python benchmarks/incident_accuracy.py`.

Prints one line for the incidents from before the signature catalogue and one line for each
held-out batch (`added: held-out-2026-12`, `held-out-2026-12b`, ...: collected without looking
at llmsched's sniffers or catalogue): how often the verdict names the right layer, and the
right rule first (the expected rule or one of its `acceptable_rules`; an incident whose rule
is null counts on its layer only).
`-v` lists every miss with what llmsched answered.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llmsched.diagnose.run import run_diagnose  # noqa: E402

INCIDENTS = ROOT / "tests" / "diagnose" / "real_incidents"
EARLIER = "earlier"


def _verdict(evidence: Path) -> dict[str, Any] | None:
    report = run_diagnose(paths=[str(evidence)])
    return report.verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    misses: list[str] = []
    for evidence in sorted(INCIDENTS.glob("*.txt")):
        expect = yaml.safe_load(evidence.with_suffix(".expect.yaml").read_text(encoding="utf-8"))
        group = str(expect.get("added") or EARLIER)
        verdict = _verdict(evidence)
        layer = verdict.get("layer") if verdict else None
        rule = verdict.get("rule") if verdict else None
        accepted = [expect["rule"], *expect.get("acceptable_rules", [])]
        layer_ok = layer == expect["layer"]
        rule_ok = layer_ok and (expect["rule"] is None or rule in accepted)
        totals[f"{group}:n"] += 1
        totals[f"{group}:layer"] += layer_ok
        totals[f"{group}:rule"] += rule_ok
        totals[f"{group}:answered"] += verdict is not None
        if not rule_ok:
            misses.append(
                f"{group:17} {evidence.stem}: expected {expect['layer']}/{expect['rule']}, "
                f"got {layer}/{rule}"
            )
    batches = sorted({key.split(":")[0] for key in totals} - {EARLIER})
    for group in (EARLIER, *batches):
        n = totals[f"{group}:n"]
        if not n:
            continue
        print(
            f"{group:17} {n:3} incidents: layer right {totals[f'{group}:layer']:3} "
            f"({totals[f'{group}:layer'] / n:.0%}), rule right {totals[f'{group}:rule']:3} "
            f"({totals[f'{group}:rule'] / n:.0%}), a verdict for {totals[f'{group}:answered']}"
        )
    if args.verbose:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
