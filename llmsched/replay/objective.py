"""What a remedy must improve (`--objective`, a diagnose rule's `confirm.judged_on`).

Its own module, importing nothing, so that the CLI can offer the choices without loading
the replay (`llmsched --help` stays fast)."""

from __future__ import annotations

from enum import Enum


class Objective(str, Enum):
    """The outcome to improve; the other user-visible outcomes guard against a worse
    overall result (`llmsched.replay.judge.compare`)."""

    ttft_p90 = "ttft_p90"
    e2e_p90 = "e2e_p90"
    throughput = "throughput"
