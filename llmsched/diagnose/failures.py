"""Recognised failures that no rule explains: the layer they show, as a triage candidate.

A paste whose messages the catalogue recognises as failures (`Pod has unbound immediate
PersistentVolumeClaims`, a liveness probe failing, a pod row in `SchedulingGated`) is not
healthy because no checklist rule covers the cause. Each such failure names the layer it
comes from as a candidate (rule unknown) with that layer's deciding commands. It is an
artifact, so it weighs as a specific symptom and goes first on equal scores; when the
words point at a rule of the same layer that reads the message, the failure supports that
rule and still stands on its own. A rule that fired still makes the verdict
(diagnose/words.py).

Not failures: messages that report state or progress (`context: true` in the catalogue:
stats lines, sizes, versions, start-up progress), configuration, the person's own words,
and ambiguous messages (diagnose/ambiguous.py ranks their causes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.evidence.signatures import load_signatures
from llmsched.evidence.triage import Candidate, WordMatch, WordTriage, load_symptoms
from llmsched.model import Location

# a recognised failure weighs as a specific symptom (symptoms.yaml weight 3); a wrapper,
# whose cause is told elsewhere, as a generic one (weight 1): specific words outrank it
FAILURE_WEIGHT = 3
WRAPPER_WEIGHT = 1
QUOTE_CHARS = 160
FAILURE = "recognised failure"

# What `kubectl get pods` STATUS and `kubectl describe pod` states print for a pod or
# container that is not running as asked (kubernetes/kubernetes
# pkg/printers/internalversion/printers.go printPod: the phase, pod.Status.Reason such as
# Evicted / UnexpectedAdmissionError / OutOf<resource>, `SchedulingGated` since v1.26, a
# container's waiting or terminated reason, `Init:` before an init container's,
# `Signal:N` / `ExitCode:N`; waiting reasons: pkg/kubelet/images/types.go,
# pkg/kubelet/container/sync_result.go, pkg/kubelet/kuberuntime/kuberuntime_container.go).
_FAILED_STATES = frozenset(
    {
        "Pending", "SchedulingGated", "Failed", "Unknown", "NodeLost", "Evicted",
        "UnexpectedAdmissionError", "NodeAffinity", "OOMKilled", "Error",
        "ContainerCannotRun", "ContainerStatusUnknown", "StartError", "DeadlineExceeded",
        "CrashLoopBackOff", "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull",
        "InvalidImageName", "ImageInspectError", "RegistryUnavailable",
        "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
        "PreStartHookError", "PostStartHookError",
    }
)  # fmt: skip
_FAILED_PREFIX = re.compile(r"^(?:Init:)?(?:OutOf\S+|Signal:\d+|ExitCode:[1-9]\d*)$")
# states that say the container's process failed, its cause told in its log
_WRAPPER_STATE = re.compile(
    r"^(?:Init:)?(?:CrashLoopBackOff|Error|Failed|RunContainerError|StartError|ContainerCannotRun"
    r"|Signal:\d+|ExitCode:\d+)$"
)
_NODE_FAILED = re.compile(r"\bNotReady\b")
_POD_FIELDS = ("status", "state_reason", "last_state_reason")
# an error line in a component's own log is that component's failure, its cause unknown
_ERROR_LINE = "error-line"
_LOG_LAYER = {"vllm-log": "vllm", "ray-log": "ray"}


def failure_candidates(
    observations: Iterable[Observation], sources: Iterable[Mapping[str, Any]] = ()
) -> list[Candidate]:
    """One candidate per layer whose failures were read (the first line of each failure
    kind is quoted; more kinds in a layer add their weight), strongest first. A wrapper
    (a failure whose cause is told elsewhere) counts only when no other failure was read;
    so does an error line no signature knows, in the layer whose logging header it has
    (`sources`: the inputs' accounts, with their first error line)."""
    catalogue = {s.id: s for s in load_signatures()}
    read: dict[str, tuple[Observation, bool]] = {}
    for observation in [*observations, *_error_lines(sources)]:
        found = _failure(observation, catalogue)
        if found is not None and found[0] not in read:
            read[found[0]] = (observation, found[1])
    if not all(wrapper for _, wrapper in read.values()):
        read = {k: (o, w) for k, (o, w) in read.items() if not w}
    by_layer: dict[str, Candidate] = {}
    for observation, wrapper in read.values():
        weight = WRAPPER_WEIGHT if wrapper else FAILURE_WEIGHT
        match = WordMatch(
            observation.signature,
            " ".join(observation.text.split())[:QUOTE_CHARS],
            observation.location or Location("<evidence>"),
            _source(observation, catalogue),
            weight,
        )
        layer = observation.layer
        first = by_layer.get(layer)
        if first is None:
            by_layer[layer] = Candidate(
                rule=None,
                layer=layer,
                score=weight,
                matches=(match,),
                cause=_symptom(observation, catalogue),
                decide=load_symptoms().decide.get(layer, ()),
                basis=FAILURE,
            )
        else:
            by_layer[layer] = replace(
                first, score=first.score + weight, matches=(*first.matches, match)
            )
    return sorted(by_layer.values(), key=lambda c: -c.score)


def with_failures(
    words: WordTriage, failures: Sequence[Candidate], cites: Mapping[str, frozenset[str]]
) -> WordTriage:
    """The triage with the recognised failures: a failure supports the first candidate of
    its layer the words (or an ambiguous message) name whose rule reads that message
    (`cites`: rule -> the signatures it quotes), adding its weight and its quote, and
    stands as its own candidate too. On equal scores the failures go first (artifacts)."""
    if not failures:
        return words
    candidates = list(words.candidates)
    for failure in failures:
        shown = {m.symptom for m in failure.matches}
        index = next(
            (
                i
                for i, c in enumerate(candidates)
                if c.layer == failure.layer and shown & cites.get(c.rule or "", frozenset())
            ),
            None,
        )
        if index is not None:
            supported = candidates[index]
            candidates[index] = replace(
                supported,
                score=supported.score + failure.score,
                matches=(*supported.matches, *failure.matches),
            )
    # the failure stands too: the evidence may refute the rule it supports
    combined = [*(_readers_named(f, cites) for f in failures), *candidates]
    combined.sort(key=lambda c: -c.score)  # stable: ties keep the order above
    return replace(words, candidates=tuple(combined))


def _readers_named(failure: Candidate, cites: Mapping[str, frozenset[str]]) -> Candidate:
    """The failure's cause, naming the rules that read its message and did not fire."""
    shown = {m.symptom for m in failure.matches}
    readers = sorted(rule for rule, signatures in cites.items() if shown & signatures)
    if not readers or failure.cause is None:
        return failure
    note = f" (read by {', '.join(readers)}, which the rest of the evidence does not confirm)"
    return replace(failure, cause=failure.cause + note)


def _failure(observation: Observation, catalogue: dict[str, Any]) -> tuple[str, bool] | None:
    """The kind of failure the observation shows and whether it is a wrapper, or None."""
    if observation.source == "text":
        return None
    signature = catalogue.get(observation.signature)
    if signature is not None:
        if signature.context or signature.ambiguous:
            return None
        return signature.id, signature.wrapper
    fields = observation.fields
    if observation.signature in ("k8s.pod.row", "k8s.pod.status"):
        states = [str(fields.get(key) or "") for key in _POD_FIELDS]
        states += [
            str(c.get(key) or "")
            for c in fields.get("containers") or ()
            if isinstance(c, dict)
            for key in ("state_reason", "last_state_reason")
        ]
        failed = [s for s in states if _failed_state(s)]
        if not failed:
            return None
        told = [s for s in failed if not _WRAPPER_STATE.match(s)]
        return (f"k8s.pod:{told[0]}", False) if told else (f"k8s.pod:{failed[0]}", True)
    if observation.signature == _ERROR_LINE:
        return f"{_ERROR_LINE}:{observation.layer}", True
    if observation.signature == "k8s.event" and fields.get("event_type") == "Warning":
        return f"k8s.event:{fields.get('reason')}", False
    if observation.signature == "k8s.node.row" and _NODE_FAILED.search(
        str(fields.get("status") or "")
    ):
        return "k8s.node:NotReady", False
    return None


def _error_lines(sources: Iterable[Mapping[str, Any]]) -> list[Observation]:
    """The first error line of each input whose logging header names a layer, or whose
    traceback last passed through vLLM's or Ray's code, as an observation of an error no
    signature knows."""
    out: list[Observation] = []
    for source in sources:
        first = source.get("first_error")
        if not isinstance(first, dict):
            continue
        layer = _LOG_LAYER.get(str(first.get("log_format"))) or first.get("raised_in")
        if layer is not None:
            where = Location(str(source.get("path")), first.get("line"))
            out.append(Observation(_ERROR_LINE, layer, "error-line", str(first["text"]), where, {}))
    return out


def _failed_state(state: str) -> bool:
    bare = state.removeprefix("Init:")
    return bare in _FAILED_STATES or bool(_FAILED_PREFIX.match(state))


def _symptom(observation: Observation, catalogue: dict[str, Any]) -> str:
    signature = catalogue.get(observation.signature)
    if signature is not None:
        return str(signature.symptom)
    fields = observation.fields
    if observation.signature == "k8s.event":
        return f"a Warning event ({fields.get('reason')}) no checklist rule covers"
    if observation.signature == "k8s.node.row":
        return "a node is NotReady"
    if observation.signature == _ERROR_LINE:
        return f"an error raised in {observation.layer}'s process that no known message explains"
    return "a pod or container is not running as asked (its status says why)"


def _source(observation: Observation, catalogue: dict[str, Any]) -> str:
    signature = catalogue.get(observation.signature)
    if signature is not None and signature.emitted_by:
        emitter = signature.emitted_by[0]
        return f"recognised failure {signature.id} ({emitter.repo} {emitter.file or emitter.thread or ''})"
    return f"recognised failure ({observation.source})"
