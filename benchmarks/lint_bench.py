"""Lint speed, measured by hand: `python benchmarks/lint_bench.py [--files 60] [--checkov PATH]`.

Prints, in one run and on the same generated corpus:
- whole-process time of `llmsched checklist lint DIR` (median of several runs),
- the same for checkov (`--framework kubernetes`), when a checkov executable is found,
- in-process objects/s on a larger corpus (load + evaluate every rule),
- `llmsched --help` start-up time.
The corpus is the bundled examples and rule cases, copied with renamed objects.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "examples").glob("*.yaml")) + sorted(
    (ROOT / "tests/rules/cases").glob("*/*.yaml")
)
SOURCES = [p for p in SOURCES if not p.name.endswith(".expect.yaml")]


def make_corpus(folder: Path, files: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        source = SOURCES[index % len(SOURCES)]
        text = source.read_text().replace("name: ", f"name: b{index}-", 1)
        (folder / f"{index:04d}-{source.parent.name}-{source.name}").write_text(text)
    return files


# As installed by pip (which byte-compiles): a checkout run with PYTHONDONTWRITEBYTECODE set
# would recompile every llmsched module at each start (~60 ms here), which no user pays.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


CPU_SECONDS: dict[str, float] = {}  # command -> median CPU time (user + system) per run


def timed(command: list[str], runs: int) -> float:
    """Median wall-clock seconds per run; the median CPU seconds go to CPU_SECONDS, which a
    busy machine (other jobs on the same cores) distorts far less than wall time."""
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                   check=False)  # warm: byte-compiled modules, file cache, llmsched's cache
    samples, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, check=False
        )
        samples.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    CPU_SECONDS[" ".join(command)] = statistics.median(cpu)
    return statistics.median(samples)


def cpu_of(command: list[str]) -> float:
    return CPU_SECONDS[" ".join(command)]


def in_process_rate(folder: Path) -> tuple[int, float]:
    sys.path.insert(0, str(ROOT))
    from llmsched.config import Config
    from llmsched.engine.lint import run_lint

    run_lint([str(folder)], Config())  # warm: imports, rule compilation cache
    start = time.perf_counter()
    report = run_lint([str(folder)], Config())
    elapsed = time.perf_counter() - start
    return int(report.stats["objects"]), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--large", type=int, default=2000, help="files in the in-process corpus")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checkov", default=shutil.which("checkov"), help="checkov executable")
    args = parser.parse_args()
    llmsched = [sys.executable, "-m", "llmsched"]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        make_corpus(corpus, args.files)
        lint = [*llmsched, "checklist", "lint", str(corpus), "-o", "json"]
        ours = timed(lint, args.runs)
        print(f"llmsched checklist lint: {args.files} files, median {ours:.3f} s per run, "
              f"{cpu_of(lint):.3f} s CPU ({args.runs} runs)")
        if args.checkov:
            checkov = [args.checkov, "-d", str(corpus), "--framework", "kubernetes",
                       "--quiet", "--compact", "-o", "json"]
            theirs = timed(checkov, max(1, args.runs // 2))
            print(f"checkov --framework kubernetes: median {theirs:.3f} s per run, "
                  f"{cpu_of(checkov):.3f} s CPU -> llmsched is {theirs / ours:.1f}x faster "
                  f"(wall), {cpu_of(checkov) / cpu_of(lint):.1f}x (CPU)")
        else:
            print("checkov: not found (pass --checkov PATH to compare side by side)")
        large = Path(tmp) / "large"
        make_corpus(large, args.large)
        objects, seconds = in_process_rate(large)
        print(
            f"in-process: {objects} objects from {args.large} files in {seconds:.3f} s "
            f"= {objects / seconds:,.0f} objects/s (load + all rules)"
        )
    help_time = timed([*llmsched, "--help"], args.runs * 2)
    print(f"llmsched --help: median {help_time * 1000:.0f} ms, "
          f"{cpu_of([*llmsched, '--help']) * 1000:.0f} ms CPU")


if __name__ == "__main__":
    main()
