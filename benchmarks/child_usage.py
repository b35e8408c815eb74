"""Wall time, CPU time and peak memory of one child process, measured so that the
benchmark's own memory does not count.

On Linux a child's ru_maxrss starts at the high-water mark of the process it was forked
from, so a benchmark that generated a 20 MB log first would see every child as at least
that big. The command is therefore started by a small Python process that reports its
only child's usage (`RUSAGE_CHILDREN` of a process with one child)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

_MEASURE = """
import json, resource, subprocess, sys
code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, code]))
"""


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak MiB, exit code) of `argv` (output discarded).

    Byte-compiled modules are used as pip installs them: with PYTHONDONTWRITEBYTECODE set
    (some shells and sandboxes set it) every run would compile each llmsched module
    again, a few tenths of a second no user pays (`lint_bench.py` drops it too)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *argv], capture_output=True, text=True, env=env
    )
    elapsed = time.perf_counter() - started
    cpu, peak, code = json.loads(done.stdout)
    return elapsed, float(cpu), float(peak), int(code)
