"""Reading inputs: files, directories, stdin; manifests handed over; mixed text; the
unrecognised report."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from sniffing import DATA, only, sniff_file

from llmsched.errors import InputFileError
from llmsched.evidence.sniff import sniff_paths, sniff_text


def test_issue_body_mixing_prose_status_events_and_a_manifest() -> None:
    result = sniff_file("issue_mixed.md")
    source = result.sources[0]
    assert source["recognised_as"] == ["ray-status", "manifest", "kubectl-events"]
    demand = only(result, "ray.demand.pending")
    assert demand.fields["shape"] == {"GPU": 1.0, "CPU": 1.0}
    assert demand.fields["pending_nodes"] == 1
    assert only(result, "ray.nodes.pending").fields["entry"] == "gpu-group, 1 launching"
    assert only(result, "k8s.pending.insufficient-gpu").fields["nodes"] == 6
    assert only(result, "k8s.pending.node-selector-mismatch").fields["nodes"] == 3
    # the manifest inside the prose goes to the linter with its original line numbers
    assert result.manifests == []
    ((path, text),) = result.manifest_texts
    assert path.endswith("issue_mixed.md")
    lines = text.splitlines()
    original = (DATA / "issue_mixed.md").read_text().splitlines()
    first = lines.index("apiVersion: ray.io/v1")
    assert original[first] == "apiVersion: ray.io/v1"
    assert "nvidia.com/gpu: 1" in text and "Any idea" not in text
    # the prose lines are reported, not silently dropped
    assert source["unrecognised_lines"] == 6
    assert source["first_unrecognised_line"] == 1


def test_manifest_file_is_handed_over_by_path() -> None:
    result = sniff_file("deployment.yaml")
    assert result.manifests == [str(DATA / "deployment.yaml")]
    assert result.observations == []
    assert result.sources[0]["recognised_as"] == ["manifest"]


def test_manifest_on_stdin_is_handed_over_as_text() -> None:
    text = (DATA / "deployment.yaml").read_text()
    result = sniff_paths(["-"], stdin=io.StringIO(text))
    assert result.manifests == []
    assert result.manifest_texts == [("<stdin>", text)]


def test_directory_is_walked_in_order_and_hidden_files_skipped(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "vllm.log").write_text((DATA / "vllm_v1_stats.log").read_text())
    (tmp_path / "a.txt").write_text((DATA / "describe_node_gpu.txt").read_text())
    (tmp_path / ".hidden").write_text((DATA / "cuda_oom.log").read_text())
    result = sniff_paths([str(tmp_path)])
    assert [Path(s["path"]).name for s in result.sources] == ["a.txt", "vllm.log"]
    assert not result.by_signature("cuda.oom")
    assert len(result.by_signature("vllm.stats")) == 5


def test_unreadable_inputs_become_errors_not_exceptions(tmp_path: Path) -> None:
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"\x7fELF\x00\x00\x01" * 100)
    result = sniff_paths([str(binary), str(tmp_path / "missing.log"), str(DATA / "cuda_oom.log")])
    assert [e.message for e in result.errors] == [
        "binary file, not text evidence",
        "no such file or directory",
    ]
    assert only(result, "cuda.oom")


def test_latin1_bytes_in_a_log_do_not_stop_it(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"caf\xe9 \xff\n" + (DATA / "vllm_v0_preemption.log").read_bytes())
    result = sniff_paths([str(log)])
    assert len(result.by_signature("vllm.preemption")) == 2
    assert result.errors == []


def test_file_over_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("x" * 2000)
    result = sniff_paths([str(log)], max_file_size=1000)
    assert "limit" in result.errors[0].message


def test_stdin_only_once() -> None:
    with pytest.raises(InputFileError):
        sniff_paths(["-", "-"], stdin=io.StringIO(""))
    with pytest.raises(InputFileError):
        sniff_paths([])


def test_nothing_recognised_is_reported() -> None:
    result = sniff_text("hello\nthe service is slow since Monday\n\n```\n")
    assert result.observations == []
    assert result.sources == [
        {
            "path": "<stdin>",
            "recognised_as": [],
            "lines": 4,
            "observations": 0,
            "unrecognised_lines": 2,
            "first_unrecognised_line": 1,
            "error_lines": 0,
            "first_error": None,
        }
    ]


def test_result_is_json_able() -> None:
    import json

    result = sniff_paths([str(DATA)])
    assert len(result.sources) == len([p for p in DATA.iterdir() if not p.name.startswith(".")])
    text = json.dumps(result.to_dict())
    assert "k8s.pending.insufficient-gpu" in text
    assert result.errors == []


def test_a_bare_traceback_is_an_error_report() -> None:
    result = sniff_text(
        "Traceback (most recent call last):\n"
        '  File "serve.py", line 3, in <module>\n'
        "ModuleNotFoundError: No module named 'vllm._C'\n"
    )
    (source,) = result.sources
    assert source["recognised_as"] == ["error-report"]
    assert source["error_lines"] == 1
    assert source["first_error"] == {
        "line": 3,
        "text": "ModuleNotFoundError: No module named 'vllm._C'",
        "log_format": None,
        "raised_in": None,  # serve.py is neither vLLM's nor Ray's code
    }


def test_gbk_text_is_read_as_chinese(tmp_path: Path) -> None:
    saved = tmp_path / "gbk.txt"
    saved.write_bytes("请求卡住不返回，但没有报错日志\n".encode("gbk"))
    (prose,) = sniff_paths([str(saved)]).prose
    assert prose[1] == "请求卡住不返回，但没有报错日志"


def test_a_stray_byte_keeps_the_rest_of_the_log(tmp_path: Path) -> None:
    saved = tmp_path / "stray.log"
    saved.write_bytes(b"caf\xe9 is open\nsecond line\n")
    (prose, second) = sniff_paths([str(saved)]).prose
    assert prose[1] == "caf\ufffd is open" and second[1] == "second line"
