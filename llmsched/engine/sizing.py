"""Which model a subject serves, as far as the manifest tells (its GPU: `manifest.gpu_pinning`).

Model: the `llmsched.io/model` annotation, else the served model name or path. Unknown is
reported as unknown ("not evaluated"), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from llmsched.manifest.views import VllmInvocation

if TYPE_CHECKING:
    from llmsched.knowledge.models import ModelSpec

MODEL_ANNOTATION = "llmsched.io/model"


def served_model(
    invocation: VllmInvocation, annotations: Mapping[str, str]
) -> tuple[ModelSpec | None, str]:
    from llmsched.knowledge.models import lookup_model

    name = annotations.get(MODEL_ANNOTATION) or invocation.model_id or invocation.model
    if not name:
        return None, "the served model is not named in the manifest"
    model = lookup_model(name)
    if model is None:
        return None, (
            f"model {name!r} is not in llmsched's catalogue: annotate "
            f"{MODEL_ANNOTATION}: <a known model id> to size it"
        )
    return model, name
