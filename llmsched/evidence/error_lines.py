"""Lines that report an error, whatever component wrote them.

A verdict of "no layer is at fault" is a claim of health; evidence that holds an error no
diagnose rule explains does not support it. These are the shapes that mark a line as an
error report independently of its message: the last line of a Python traceback (an
exception class and its message), a log header at error level (Python `logging` and vLLM's
`ERROR`/`CRITICAL`, Ray's C++ `E`/`F`, klog's `E1201`/`F1201`), and the process-death lines
shells and the C runtime print (`Segmentation fault`, `core dumped`, `Killed`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "E", "F"})
# a dotted name: `torch.`, `ray.exceptions.`
QUALIFIER = r"(?:[A-Za-z_]\w*\.)*"
# the class a traceback's final line names (CPython's traceback.format_exception_only):
# `RuntimeError`, `torch.OutOfMemoryError`, `ncclSystemError`, `SystemExit`, `KeyboardInterrupt`
EXCEPTION_CLASS = QUALIFIER + r"[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)"
# that line, with its message or alone; `RayTaskError(RuntimeError)` names the cause too
_EXCEPTION = re.compile(rf"^{EXCEPTION_CLASS}\b(?:\(.*?\))?(?::|$)")
# bash's report of a child's signal ("... Segmentation fault (core dumped) python x.py")
_PROCESS_DEATH = re.compile(r"^Killed$|^(?:Segmentation fault|Bus error)\b|.*\(core dumped\)")


def is_error_line(text: str, prefix: Mapping[str, Any]) -> bool:
    """Whether the line, its prefixes peeled off, reports an error."""
    level = prefix.get("level")
    if isinstance(level, str) and level.upper() in _ERROR_LEVELS:
        return True
    stripped = text.strip()
    if _EXCEPTION.match(stripped):
        return True
    # what `_PROCESS_DEATH` needs: its first letter, or the `(core dumped)` it ends with
    could_die = stripped[:1] in "KSB" or "(core dumped)" in stripped
    return could_die and _PROCESS_DEATH.match(stripped) is not None


# a traceback frame in a component's own package (site-packages, dist-packages or a checkout)
_COMPONENT_FRAME = re.compile(
    r'^\s*File "(?:[^"]*[/\\])?(?P<package>vllm|ray)[/\\][^"]*", line \d+'
)
TRACEBACK_LOOKBACK = 200  # lines above an error read for its traceback's frames


def raised_in(texts: Sequence[str], error: int) -> str | None:
    """The component (`vllm`, `ray`) whose code the traceback above line `error` last passed
    through (its innermost frame in either package), or None when no such frame is near."""
    for index in range(error - 1, max(-1, error - 1 - TRACEBACK_LOOKBACK), -1):
        match = _COMPONENT_FRAME.match(texts[index])
        if match is not None:
            return match.group("package")
        if texts[index].startswith("Traceback (most recent call last)"):
            return None
    return None
