"""Big-but-legal inputs, measured by hand (issue 10's targets; figures, not timed tests):
`python benchmarks/input_size_bench.py [--only lint-big|lint-many|replay-1m]`.

- lint of one ~10 MB file holding ~17k objects (target: under 10 s and 300 MB),
- lint of 5,000 small files (target: under 15 s),
  each with `-o json` and with the default text report (what a user typing the plain
  command gets: the findings tables of tens of thousands of findings),
- replay of a generated 1M-request workload (target: under 15 s and 500 MB).

Each case runs the real CLI in a child process; its wall time, CPU time (user + system,
which other jobs on the same cores distort far less than wall time) and peak resident
memory (the child's ru_maxrss) are printed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import child_usage

ROOT = Path(__file__).resolve().parents[1]
DEPLOYMENT = (ROOT / "examples" / "chat-deployment.yaml").read_text()


def renamed(text: str, index: int) -> str:
    return text.replace("name: ", f"name: n{index}-", 1)


def big_file(folder: Path, target_bytes: int = 10 * 1024 * 1024) -> tuple[list[str], str]:
    docs = [d for d in DEPLOYMENT.split("\n---\n") if d.strip()]
    parts, size, index = [], 0, 0
    while size < target_bytes - 64 * 1024:
        doc = renamed(docs[index % len(docs)], index)
        parts.append(doc)
        size += len(doc) + 5
        index += 1
    path = folder / "big.yaml"
    path.write_text("\n---\n".join(parts) + "\n")
    return [
        "checklist", "lint", str(path), "--max-file-size", str(16 * 1024 * 1024), "-o", "json",
    ], f"{path.stat().st_size / 2**20:.1f} MB, {index} objects"  # fmt: skip


def many_files(folder: Path, count: int = 5000) -> tuple[list[str], str]:
    tree = folder / "many"
    tree.mkdir()
    for index in range(count):
        (tree / f"f{index:05d}.yaml").write_text(renamed(DEPLOYMENT, index))
    return ["checklist", "lint", str(tree), "-o", "json"], f"{count} files"


def replay_1m(folder: Path) -> tuple[list[str], str]:
    config = ROOT / "examples" / "replay" / "small.config.json"
    workload = "n=1000000,rate=50,prompt=64,output=16"
    return ["replay", "--workload", workload, "--config", str(config), "--no-charts", "-o", "json"], (
        "1,000,000 generated requests"
    )


CASES = {"lint-big": big_file, "lint-many": many_files, "replay-1m": replay_1m}


def measure(args: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak MB, exit code) of one run of the CLI."""
    return child_usage.measure([sys.executable, "-m", "llmsched", *args])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(CASES))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in CASES.items():
            if options.only and name != options.only:
                continue
            folder = Path(tmp) / name
            folder.mkdir()
            args, what = build(folder)
            variants = [("", args)]
            if args[:2] == ["checklist", "lint"]:
                text = [a for a in args if a not in ("-o", "json")]  # the default output
                variants = [(" json", args), (" text", text)]
            for output, command in variants:
                elapsed, cpu, peak_mb, code = measure(command)
                print(
                    f"{name + output:15s} {what:32s} {elapsed:6.1f} s  cpu {cpu:6.1f} s  "
                    f"peak {peak_mb:6.0f} MB  exit {code}"
                )


if __name__ == "__main__":
    main()
