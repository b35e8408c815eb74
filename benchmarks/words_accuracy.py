"""Free-text triage on descriptions, by hand: `python benchmarks/words_accuracy.py [-v]`.

`data/symptom_descriptions.tsv` holds one symptom per line (`RULE<TAB>text`), each written
in an engineer's own words (English and Chinese, some quoting a log fragment), for every
diagnose rule of the checklist. They were written before the symptom catalogue was read and
then used to fix it, so the figure is a regression check, not a blind measure. Prints how
often the verdict names the rule (and its layer); `-v` lists the misses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llmsched.diagnose.run import run_diagnose  # noqa: E402

DESCRIPTIONS = Path(__file__).resolve().parent / "data" / "symptom_descriptions.tsv"
LAYERS = {"DK8S": "kubernetes", "DRAY": "ray", "DVLLM": "vllm"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    total = layer_right = rule_right = 0
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        paste = Path(tmp) / "description.txt"
        for line in DESCRIPTIONS.read_text(encoding="utf-8").splitlines():
            rule, text = line.split("\t", 1)
            paste.write_text(text + "\n", encoding="utf-8")
            verdict = run_diagnose(paths=[str(paste)]).verdict or {}
            layer = next(v for k, v in LAYERS.items() if rule.startswith(k))
            total += 1
            layer_right += verdict.get("layer") == layer
            rule_right += verdict.get("rule") == rule
            if verdict.get("rule") != rule:
                misses.append(f"{rule}: got {verdict.get('layer')}/{verdict.get('rule')}  {text}")
    print(
        f"{total} descriptions: layer right {layer_right} ({layer_right / total:.0%}), "
        f"rule right {rule_right} ({rule_right / total:.0%})"
    )
    if args.verbose:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
