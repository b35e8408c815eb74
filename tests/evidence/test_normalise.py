"""Normalisation: transport and log prefixes peeled off, line numbers kept.

The equivalence tests take real evidence from `data/`, wrap it the ways people paste it
(GitHub quotes, fences, colours, process prefixes, kubectl's prefixes, wrapped lines) and
require the same observations, at the same lines, as the plain paste."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sniffing import DATA

from llmsched.evidence.normalise import parse_line, split_lines, strip_transport
from llmsched.evidence.sniff import sniff_text

# fields that only say where a line came from; a wrapper may add or change them
_CONTEXT = {"timestamp", "process", "pid", "rank", "service", "pod", "container", "ip"}


@pytest.mark.parametrize(
    ("raw", "text", "prefix", "log_format"),
    [
        (
            "INFO 12-01 10:00:00 [loggers.py:123] Engine 000: Running: 1 reqs",
            "Engine 000: Running: 1 reqs",
            {"level": "INFO", "where": "loggers.py:123"},
            "vllm-log",
        ),
        (
            "WARNING 12-01 10:00:00 scheduler.py:1560] Sequence group 1 is preempted",
            "Sequence group 1 is preempted",
            {"level": "WARNING", "where": "scheduler.py:1560"},
            "vllm-log",
        ),
        (
            "(EngineCore_DP0 pid=456) ERROR 12-01 10:00:00 [core.py:1] boom",
            "boom",
            {"process": "EngineCore_DP0", "pid": "456"},
            "vllm-log",
        ),
        (
            "(VllmWorker rank=0 pid=77) INFO 12-01 10:00:00 [w.py:1] up",
            "up",
            {"process": "VllmWorker", "rank": "0", "pid": "77"},
            "vllm-log",
        ),
        (
            "(RayWorkerWrapper pid=123, ip=10.0.0.1) RuntimeError: No CUDA GPUs are available",
            "RuntimeError: No CUDA GPUs are available",
            {"process": "RayWorkerWrapper", "pid": "123", "ip": "10.0.0.1"},
            "vllm-log",
        ),
        (
            "(ServeReplica:app:LLMDeployment pid=9) Replica failed",
            "Replica failed",
            {"process": "ServeReplica:app:LLMDeployment", "pid": "9"},
            "ray-log",
        ),
        (
            "(pid=4224) Traceback (most recent call last):",
            "Traceback (most recent call last):",
            {"pid": "4224"},
            None,
        ),
        (
            "(autoscaler +1m2s) Tip: use `ray status`",
            "Tip: use `ray status`",
            {"process": "autoscaler"},
            "ray-log",
        ),
        (
            "(raylet, ip=10.0.0.2) killed",
            "killed",
            {"process": "raylet", "ip": "10.0.0.2"},
            "ray-log",
        ),
        (
            "I1201 10:00:00.123456      12 main.go:123] Starting to serve",
            "Starting to serve",
            {"level": "I", "where": "main.go:123"},
            "device-plugin-log",
        ),
        (
            "Dec 01 10:00:00 gpu-node-1 kubelet[1234]: Pod sandbox changed",
            "Pod sandbox changed",
            {"host": "gpu-node-1", "process": "kubelet", "pid": "1234"},
            None,
        ),
        (
            "2024-01-01 10:00:00,123 - my.app - ERROR - CUDA out of memory",
            "CUDA out of memory",
            {"logger": "my.app", "level": "ERROR"},
            None,
        ),
        (
            "2025-03-26 14:13:12,438 INFO scripts.py:865 -- Local node IP: 10.0.0.1",
            "Local node IP: 10.0.0.1",
            {"level": "INFO", "where": "scripts.py:865"},
            "ray-log",
        ),
        (
            "[pod/vllm-0/vllm] 2024-01-01T10:00:00.123456789Z (APIServer pid=1) x",
            "x",
            {"pod": "vllm-0", "container": "vllm", "process": "APIServer"},
            "vllm-log",
        ),
        ("vllm-1  | (APIServer pid=1) y", "y", {"service": "vllm-1", "pid": "1"}, "vllm-log"),
        (
            "[rank0]: torch.OutOfMemoryError: CUDA out of memory.",
            "torch.OutOfMemoryError: CUDA out of memory.",
            {"rank": "0"},
            None,
        ),
    ],
)
def test_log_prefixes_are_peeled(
    raw: str, text: str, prefix: dict[str, str], log_format: str | None
) -> None:
    line = parse_line(7, raw)
    assert line.number == 7
    assert line.text == text
    assert {k: line.prefix.get(k) for k in prefix} == prefix
    assert line.log_format == log_format


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("> Warning  FailedScheduling", "Warning  FailedScheduling"),
        ("> > nested quote", "nested quote"),
        (">> tight nesting", "tight nesting"),
        (">", ""),
        ("\x1b[36m(APIServer pid=1)\x1b[0m INFO", "(APIServer pid=1) INFO"),
        ("[36m(pid=1)[0m lost escape byte", "(pid=1) lost escape byte"),
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"),
        ("  indented stays indented", "  indented stays indented"),
        ("a > b is not a quote", "a > b is not a quote"),
    ],
)
def test_transport_is_stripped_and_layout_kept(raw: str, clean: str) -> None:
    assert strip_transport(raw) == clean


@pytest.mark.parametrize(
    ("raw", "command"),
    [
        ("$ kubectl describe pod vllm-0", "kubectl describe pod vllm-0"),
        ("root@ttogpu:~# kubectl get pods -A", "kubectl get pods -A"),
        (
            "(venv) user@h100:~/work$ vllm serve meta-llama/Llama-3.1-8B",
            "vllm serve meta-llama/Llama-3.1-8B",
        ),
        ("[root@node-1 ~]# nvidia-smi", "nvidia-smi"),
        ("PS C:\\Users\\me> kubectl logs vllm-0", "kubectl logs vllm-0"),
        ("> $ ray status", "ray status"),
    ],
)
def test_prompts_keep_the_command_as_a_line(raw: str, command: str) -> None:
    line = parse_line(1, raw)
    assert (line.kind, line.command, line.text) == ("prompt", command, command)


@pytest.mark.parametrize(
    "raw", ["$5 per GPU hour", "$ 5 per GPU hour", "# Describe output", "100% done", "a$ b"]
)
def test_prose_is_not_a_prompt(raw: str) -> None:
    assert parse_line(1, raw).kind != "prompt"


def test_the_command_follows_its_output_until_the_fence_closes() -> None:
    lines = split_lines("```console\n$ kubectl get pods\nNAME READY\nvllm-0 0/1\n```\nprose")
    assert [ln.kind for ln in lines] == ["fence", "prompt", "", "", "fence", ""]
    assert [ln.command for ln in lines[2:4]] == ["kubectl get pods"] * 2
    assert lines[5].command is None


@pytest.mark.parametrize("fence", ["```", "```log", "``` text", "~~~", "~~~yaml", "````"])
def test_fences_with_info_strings(fence: str) -> None:
    assert parse_line(1, fence).kind == "fence"


def test_rsyslog_escaped_colours_are_stripped() -> None:
    line = parse_line(1, "#033[2m#033[33m(raylet)#033[0m node 1 killed 2 workers")
    assert line.text == "node 1 killed 2 workers" and line.prefix["process"] == "raylet"


# ------------------------------------------------------------------ equivalence


def _quoted(lines: list[str]) -> tuple[list[str], int]:
    return [f"> {ln}" if ln else ">" for ln in lines], 0


def _nested(lines: list[str]) -> tuple[list[str], int]:
    return [f"> > {ln}" for ln in lines], 0


def _fenced(lines: list[str]) -> tuple[list[str], int]:
    return ["```text", *lines, "```"], 1


def _coloured(lines: list[str]) -> tuple[list[str], int]:
    def colour(line: str) -> str:
        head, sep, tail = line.partition(" ")
        return f"\x1b[1;36m{head}\x1b[0m{sep}{tail}\x1b[0m" if line.strip() else line

    return [colour(ln) for ln in lines], 0


def _engine_prefix(lines: list[str]) -> tuple[list[str], int]:
    return [f"(EngineCore_0 pid=4321) {ln}" if ln.strip() else ln for ln in lines], 0


def _kubectl_prefixes(lines: list[str]) -> tuple[list[str], int]:
    stamp = "[pod/vllm-0/vllm] 2025-05-19T10:13:11.123456789Z "
    return [f"{stamp}{ln}" if ln.strip() else ln for ln in lines], 0


def _issue_paste(lines: list[str]) -> tuple[list[str], int]:
    """Quoted, fenced and coloured at once, with the command that printed it."""
    body, _ = _coloured(lines)
    return [f"> {ln}" for ln in ["```", "$ kubectl logs vllm-0", *body, "```"]], 2


_WRAPPERS: dict[str, Callable[[list[str]], tuple[list[str], int]]] = {
    "quoted": _quoted,
    "nested-quote": _nested,
    "fenced": _fenced,
    "coloured": _coloured,
    "issue-paste": _issue_paste,
}
_LOGS = [
    "vllm_v1_stats.log",
    "vllm_v0_preemption.log",
    "vllm_v1_startup_errors.log",
    "cuda_oom.log",
    "ray_memory_monitor.log",
    "nccl_shm.log",
]
_LAYOUTS = [
    "get_events_namespace.txt",
    "ray_status_v1_pg_pending.txt",
    "describe_pod_pending.txt",
    "describe_node_gpu.txt",
    "ray_status_v2_verbose.txt",
]


def _seen(text: str, offset: int = 0) -> list[tuple[str, int, dict[str, Any]]]:
    result = sniff_text(text, "paste.md")
    return [
        (
            o.signature,
            (o.location.line or 0) - offset if o.location else 0,
            {k: v for k, v in o.fields.items() if k not in _CONTEXT},
        )
        for o in result.observations
    ]


def _cases(names: list[str], wrappers: list[str]) -> list[Any]:
    return [pytest.param(n, w, id=f"{n}-{w}") for n in names for w in wrappers]


@pytest.mark.parametrize(("name", "wrapper"), _cases(_LOGS + _LAYOUTS, list(_WRAPPERS)))
def test_wrapped_paste_yields_the_plain_observations(name: str, wrapper: str) -> None:
    plain = (DATA / name).read_text(encoding="utf-8")
    expected = _seen(plain)
    assert expected, f"{name} yields nothing even plain"
    wrapped, offset = _WRAPPERS[wrapper](plain.splitlines())
    assert _seen("\n".join(wrapped), offset) == expected


@pytest.mark.parametrize(
    ("name", "wrapper"),
    _cases(_LOGS, ["engine-prefix", "kubectl-prefixes"]),
)
def test_log_prefixes_yield_the_plain_observations(name: str, wrapper: str) -> None:
    plain = (DATA / name).read_text(encoding="utf-8")
    prefixes = {"engine-prefix": _engine_prefix, "kubectl-prefixes": _kubectl_prefixes}
    wrapped, offset = prefixes[wrapper](plain.splitlines())
    assert _seen("\n".join(wrapped), offset) == _seen(plain)


def test_terminal_wrapped_log_yields_the_plain_observations() -> None:
    plain = (DATA / "vllm_v1_stats.log").read_text(encoding="utf-8").splitlines()
    wrapped: list[str] = []
    firsts: list[int] = []
    for line in plain:
        firsts.append(len(wrapped) + 1)
        wrapped.extend(line[i : i + 100] for i in range(0, max(len(line), 1), 100))
    expected = [(sig, firsts[line - 1], fields) for sig, line, fields in _seen("\n".join(plain))]
    assert _seen("\n".join(wrapped)) == expected


def test_a_hanging_indent_under_the_log_prefix_continues_the_record() -> None:
    lines = split_lines(
        "(EngineCore pid=7) Waiting for creating a placement group of specs for 10 seconds.\n"
        "                   specs=[{'GPU': 1.0}, {'GPU': 1.0}].\n"
        "                   Check `ray status`.\n"
        '    File "ray_utils.py", line 3\n'
    )
    assert lines[0].text.endswith(
        "10 seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status`."
    )
    assert lines[0].joined == (2, 3)
    assert lines[3].kind == "" and lines[3].text.strip().startswith("File")


def test_a_wrapped_exception_line_is_joined() -> None:
    lines = split_lines(
        "ray.exceptions.OutOfMemoryError: 2 worker(s) were killed due to the node\n"
        "running low on memory. Memory on the node (IP: 10.0.0.2) was\n"
        "60.10GB / 62.00GB (0.969355)\n"
        "\n"
        "Next paragraph"
    )
    assert lines[0].text == (
        "ray.exceptions.OutOfMemoryError: 2 worker(s) were killed due to the node running low"
        " on memory. Memory on the node (IP: 10.0.0.2) was 60.10GB / 62.00GB (0.969355)"
    )
    assert lines[4].text == "Next paragraph"


def test_an_exception_line_that_ends_a_sentence_is_not_joined() -> None:
    lines = split_lines(
        "RuntimeError: CUDA error: an illegal memory access was encountered.\n"
        "I restarted the pod and it happened again\n"
    )
    assert [ln.kind for ln in lines] == ["", ""]


def test_a_result_comment_is_read_with_the_code_line_it_annotates() -> None:
    lines = split_lines("print(ray.get_gpu_ids())\n# prints []\n# a plain comment\n")
    assert lines[0].text == "print(ray.get_gpu_ids())  # prints []"
    assert lines[0].joined == (2,) and lines[1].kind == "joined"
    assert lines[2].kind == "" and lines[2].text == "# a plain comment"
