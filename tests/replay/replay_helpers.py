from __future__ import annotations

import gzip
from pathlib import Path

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"


def golden_lines(name: str) -> list[str]:
    with gzip.open(GOLDEN / f"{name}.vllm-0.32.steps.jsonl.gz", "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def trace_requests(specs: list[tuple[int, int, int]], **common: object) -> list:
    """(arrival_step, prompt_len, output_len) triples -> TraceRequests named r0, r1, ..."""
    from llmsched.replay.request import TraceRequest

    return [
        TraceRequest(f"r{i}", p, o, arrival_step=a, **common)  # type: ignore[arg-type]
        for i, (a, p, o) in enumerate(specs)
    ]
