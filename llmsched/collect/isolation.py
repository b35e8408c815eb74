"""Per-source isolation: an answer of an odd shape costs that source, never the run.

Collectors parse what servers send into typed records; a value of the wrong type
(``GPU: "lots"``, ``command:`` as a string, a list where a mapping belongs) surfaces as
one of :data:`ODD_SHAPES`. The collector that catches it records a `CollectorError`
naming the source and goes on with the others.
"""

from __future__ import annotations

ODD_SHAPES: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    OverflowError,
    RecursionError,
)


def odd_shape_reason(exc: BaseException) -> str:
    """One line for the recorded error: ``answer of an unexpected shape (TypeError: …)``."""
    detail = str(exc).splitlines()[0][:200] if str(exc).strip() else ""
    name = type(exc).__name__
    return (
        f"answer of an unexpected shape ({name}: {detail})"
        if detail
        else (f"answer of an unexpected shape ({name})")
    )
