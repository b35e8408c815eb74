"""Engine arguments from pasted fragments: a `vllm serve` / api_server command line (with
its `\\` continuation lines), an offline `LLM(...)` call, a `pip freeze` version line.

They are parsed with vLLM's own option table (`llmsched.knowledge.vllm.args`), so that
`--max-num-seqs 512` on a command line counts like `'max_num_seqs': 512` in the engine's
`non-default args` log line.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Mapping
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.knowledge.vllm.args import ParsedArgs, parse_engine_kwargs, parse_vllm_argv

# endpoint fields an engine argument sets (dest -> endpoint key)
ENGINE_FIELDS = (
    "max_num_seqs",
    "max_model_len",
    "gpu_memory_utilization",
    "block_size",
    "max_num_batched_tokens",
    "tensor_parallel_size",
)
_KWARG = re.compile(r"(\w+)\s*=\s*(\"[^\"]*\"|'[^']*'|[^,]+)")


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text.rstrip(" \\"))
    except ValueError:  # an unbalanced quote in a cut paste
        return text.rstrip(" \\").split()


def _literal(raw: str) -> Any:
    try:
        return ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError):
        return raw.strip()


def _apply(data: dict[str, Any], parsed: ParsedArgs) -> None:
    for key in ENGINE_FIELDS:
        if parsed.explicit.get(key) is not None:
            data[key] = parsed.explicit[key]
    data["model"] = parsed.model or data["model"]
    data["cli_args"] = dict(parsed.explicit)


def merge_engine_fragment(data: dict[str, Any], observation: Observation) -> None:
    """Fold one fragment into an endpoint's facts (`data`: see vllm.endpoint_base)."""
    fields: Mapping[str, Any] = observation.fields
    line = observation.location.line if observation.location else None
    signature = observation.signature
    if signature == "vllm.package-version":
        data["installed_version"] = fields.get("version")
        data["version"] = data["version"] or fields.get("version")
        return
    if signature == "vllm.llm-kwargs":
        arguments = fields.get("arguments")  # parsed by the code reader (evidence/python_calls.py)
        kwargs = (
            dict(arguments)
            if isinstance(arguments, Mapping)
            else {k: _literal(v) for k, v in _KWARG.findall(str(fields.get("kwargs") or ""))}
        )
        _apply(data, parse_engine_kwargs(kwargs))
        return
    if fields.get("launcher"):
        data["cli_tokens"] = _words(str(fields.get("args") or ""))
        data["cli_positional_model"] = fields["launcher"] == "vllm serve"
    elif fields.get("continued") and line is not None and data.get("cli_line") == line - 1:
        data["cli_tokens"] = [*data.get("cli_tokens", []), *_words(str(fields["continued"]))]
    else:  # an option line that does not continue a command seen just above
        return
    data["cli_line"] = line
    _apply(
        data,
        parse_vllm_argv(
            data["cli_tokens"], positional_model=bool(data.get("cli_positional_model", True))
        ),
    )
