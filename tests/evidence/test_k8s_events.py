"""`kubectl get events` tables: a row that repeats an earlier event is folded into it."""

from __future__ import annotations

from llmsched.evidence.sniff import sniff_text

HEADER = f"{'NAMESPACE':<12}{'LAST SEEN':<20}{'TYPE':<10}{'REASON':<19}{'OBJECT':<24}MESSAGE"
GPU = (
    "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are "
    "available: 4 No preemption victims found for incoming pod."
)
PROBE = (
    'Liveness probe failed: Get "http://10.0.3.4:8000/health": dial tcp 10.0.3.4:8000: '
    "connect: connection refused"
)


def row(age: str, reason: str, pod: str, message: str, kind: str = "Warning") -> str:
    return f"{'llm':<12}{age:<20}{kind:<10}{reason:<19}{'pod/' + pod:<24}{message}"


def table(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


def events(text: str) -> list[dict[str, object]]:
    result = sniff_text(text, "events.txt")
    return [
        {"line": o.location.line if o.location else None, **o.fields}
        for o in result.observations
        if o.signature == "k8s.event"
    ]


def test_a_repeated_event_is_one_observation_counted_with_its_first_and_last_line() -> None:
    text = table(
        row("12m", "FailedScheduling", "vllm-0", GPU),
        row("3m", "Unhealthy", "vllm-0", PROBE),
        row("2m", "FailedScheduling", "vllm-0", GPU),
        row("1m", "FailedScheduling", "vllm-0", GPU),
    )
    found = events(text)
    assert [(e["line"], e["reason"], e["count"]) for e in found] == [
        (2, "FailedScheduling", 3),
        (3, "Unhealthy", 1),
    ]
    assert (found[0]["rows"], found[0]["last_line"], found[0]["age"]) == (3, 5, "12m")
    assert "rows" not in found[1] and "last_line" not in found[1]
    result = sniff_text(text, "events.txt")
    gpu = [o for o in result.observations if o.signature == "k8s.pending.insufficient-gpu"]
    assert [o.location.line for o in gpu if o.location] == [2]  # matched once, not per row
    assert gpu[0].fields["count"] == 3


def test_events_of_other_pods_reasons_or_messages_are_not_folded() -> None:
    text = table(
        row("5m", "FailedScheduling", "vllm-0", GPU),
        row("5m", "FailedScheduling", "vllm-1", GPU),
        row("5m", "Unhealthy", "vllm-0", PROBE),
        row("5m", "Unhealthy", "vllm-0", PROBE.replace("10.0.3.4", "10.0.3.5")),
        row("5m", "Unhealthy", "vllm-0", PROBE, kind="Normal"),
    )
    assert [e["line"] for e in events(text)] == [2, 3, 4, 5]  # the Normal row: no k8s.event
    result = sniff_text(text, "events.txt")
    probes = [o for o in result.observations if o.signature == "k8s.probe.liveness-failed"]
    assert [o.location.line for o in probes if o.location] == [4, 5, 6]


def test_an_age_carrying_kubectls_own_tally_is_kept_apart() -> None:
    text = table(
        row("40s", "Unhealthy", "vllm-0", PROBE),
        row("10s (x3 over 50s)", "Unhealthy", "vllm-0", PROBE),
        row("5s", "Unhealthy", "vllm-0", PROBE),
    )
    assert [(e["line"], e["count"]) for e in events(text)] == [(2, 2), (3, 1)]


def test_the_count_column_of_older_tables_is_summed() -> None:
    header = f"{'LAST SEEN':<11}{'COUNT':<7}{'TYPE':<9}{'REASON':<18}{'OBJECT':<20}MESSAGE"

    def old_row(age: str, count: int) -> str:
        return f"{age:<11}{count:<7}{'Warning':<9}{'BackOff':<18}{'pod/vllm-0':<20}Back-off"

    text = "\n".join([header, old_row("9m", 4), old_row("1m", 7)]) + "\n"
    assert [(e["line"], e["count"], e["rows"]) for e in events(text)] == [(2, 11, 2)]
