"""How long requests are, as far as a manifest or the config says: the length KV-cache
concurrency is judged at (VLLM002). Nothing said: nothing assumed, the rule stays quiet."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmsched.errors import ConfigError, InputFileError
from llmsched.model import Location

TOKENS_ANNOTATION = "llmsched.io/tokens-per-request"
LEGACY_ANNOTATION = "llmsched.io/mean-tokens-per-seq"  # the earlier spelling, still read
WORKLOAD_PARAM = "workload_tokens_per_request"  # handed to checks by the evaluator
WORKLOAD_SOURCE_PARAM = "workload_source"


@dataclass(frozen=True)
class RequestLength:
    tokens: int
    source: str  # said in the finding: which assumption was used


def config_workload(workload: str | None, where: str | None) -> RequestLength | None:
    """The config's `workload`: tokens per request, or a `replay --workload` spec whose
    mean prompt + mean output is the length of a request."""
    if workload is None:
        return None
    text = workload.strip()
    if text.isdigit():
        if int(text) < 1:
            raise ConfigError("workload: tokens per request must be >= 1", Location(where or ""))
        return RequestLength(int(text), "from the config workload")
    from llmsched.replay.synthetic import parse_workload_spec

    try:
        spec = parse_workload_spec(text)
    except InputFileError as exc:
        raise ConfigError(f"workload: {exc.message}", Location(where or "")) from None
    prompt, output = spec.prompt.expected(), spec.output.expected()
    return RequestLength(
        max(1, round(prompt + output)),
        f"from the config workload: mean prompt {prompt:.0f} + output {output:.0f}",
    )


def request_length(
    annotations: Mapping[str, str],
    params: Mapping[str, Any],
    max_model_len: int | None,
    max_model_len_written: bool,
    bound: int,
) -> RequestLength | None:
    """The annotation, else the config workload, else a bounded `--max-model-len`.

    A written `--max-model-len` no longer than `bound` says the requests
    are short: sequences are judged at that bound, the longest the engine admits. A longer
    one says nothing about typical requests. Raises ValueError for an annotation that is
    not a whole number of tokens.
    """
    for key in (TOKENS_ANNOTATION, LEGACY_ANNOTATION):
        if key in annotations:
            raw = str(annotations[key]).strip()
            if not raw.isdigit() or int(raw) < 1:
                raise ValueError(f"annotation {key}={raw!r} is not a whole number of tokens")
            return RequestLength(int(raw), f"from the annotation {key}")
    if params.get(WORKLOAD_PARAM):
        return RequestLength(int(params[WORKLOAD_PARAM]), str(params[WORKLOAD_SOURCE_PARAM]))
    if max_model_len_written and max_model_len and max_model_len <= bound:
        return RequestLength(
            max_model_len,
            f"every sequence at --max-model-len {max_model_len}, the longest the engine admits",
        )
    return None
