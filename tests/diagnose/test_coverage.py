"""A verdict never claims health about what was not looked at: an unreachable cluster,
input with no evidence, a rule that could not judge a subject (`llmsched.diagnose.coverage`)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests/rules/diagnose_cases/DK8S01"
ALL_CLEAR = "no layer is at fault"
FORMATS = ("text", "json", "sarif", "junit", "github")

USER_RULE = """\
code: X901
name: needs-a-missing-fact
kind: diagnose
layer: vllm
severity: warning
confidence: 0.5
scope: pod
symptom: pod.fact_no_sniffer_provides > 0.9
summary: A user rule that reads a fact the evidence lacks.
rationale: Its symptom reads a fact that no sniffer provides, so it cannot judge.
remediation: Nothing to do; the rule exists to be not evaluated.
next_steps: |
  kubectl get pods
signatures: []
references: ["test"]
"""


def llmsched(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "llmsched", "diagnose", "--no-replay", *args],
                          cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "kc").write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{closed_port()}'}}}}]\n"
        "users: [{name: u, user: {token: abcdef123456}}]\n"
        "contexts: [{name: prod, context: {cluster: c, user: u, namespace: llm}}]\n"
        "current-context: prod\n"
    )
    (tmp_path / "myrules").mkdir()
    (tmp_path / "myrules/X901.yaml").write_text(USER_RULE)
    return tmp_path


def test_an_unreachable_cluster_is_exit_2_not_an_all_clear(workdir: Path) -> None:
    result = llmsched("--kubeconfig", "kc", "--context", "prod", "-n", "llm", cwd=workdir)
    assert result.returncode == 2, result.stdout + result.stderr
    assert ALL_CLEAR not in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("llmsched: error: nothing could be collected") and "refused" in last


def test_evidence_plus_an_unreachable_cluster_says_what_was_not_collected(workdir: Path) -> None:
    pending = str(CASES / "bad-describe-pod.txt")
    result = llmsched(pending, "--kubeconfig", "kc", "--context", "prod", "-o", "json", cwd=workdir)
    assert result.returncode == 1, result.stderr
    verdict = json.loads(result.stdout)["verdict"]
    assert verdict["layer"] == "kubernetes"  # the pasted evidence was still judged
    assert any(
        g.startswith("kubernetes prod: could not be collected") for g in verdict["not_judged"]
    )
    healthy = str(CASES / "good-running.txt")
    clean = llmsched(healthy, "--kubeconfig", "kc", "--context", "prod", cwd=workdir)
    assert clean.returncode == 2 and ALL_CLEAR not in clean.stdout
    assert "could not judge" in clean.stdout and "could not be collected" in clean.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_input_with_no_evidence_never_prints_an_all_clear(workdir: Path, fmt: str) -> None:
    result = llmsched("-", "-o", fmt, cwd=workdir, stdin="hello, nothing to see here\n")
    # nothing recognised is an answer (exit 0, issue 9), but never an all-clear
    assert result.returncode == 0
    assert ALL_CLEAR not in result.stdout
    if fmt == "json":
        assert json.loads(result.stdout)["verdict"]["summary"].startswith("could not judge")
    if fmt in ("text", "github"):
        assert "could not judge: no evidence was read" in result.stdout


def test_not_evaluated_reasons_reach_the_verdict(workdir: Path) -> None:
    healthy = str(CASES / "good-running.txt")
    result = llmsched(healthy, "--rules-dir", "myrules", "-o", "json", cwd=workdir)
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)["verdict"]
    assert verdict is not None and verdict["layer"] is None
    (gap,) = verdict["not_judged"]
    assert gap.startswith("X901 ") and "fact_no_sniffer_provides" in gap
    text = llmsched(healthy, "--rules-dir", "myrules", cwd=workdir).stdout
    assert ALL_CLEAR not in text and "could not judge" in text and "X901" in text.split("\n\n")[0]
    found = llmsched(str(CASES / "bad-describe-pod.txt"), "--rules-dir", "myrules", "-o", "json",
                     cwd=workdir)  # fmt: skip
    assert json.loads(found.stdout)["verdict"]["not_judged"][0].startswith("X901 ")


def test_a_full_clean_look_still_says_no_layer_is_at_fault(workdir: Path) -> None:
    result = llmsched(str(CASES / "good-running.txt"), cwd=workdir)
    assert result.returncode == 0 and ALL_CLEAR in result.stdout


def traceback(frame: str, module: str) -> str:
    """A Python traceback of an import that failed in `frame`, as CPython prints it."""
    return (
        "Traceback (most recent call last):\n"
        f'  File "{frame}", line 13, in <module>\n'
        f"    import {module}\n"
        f"ModuleNotFoundError: No module named '{module}'\n"
    )


def json_verdict(workdir: Path, name: str, code: int) -> dict:  # type: ignore[type-arg]
    result = llmsched(name, "-o", "json", cwd=workdir)
    assert result.returncode == code, result.stderr
    return json.loads(result.stdout)["verdict"]  # type: ignore[no-any-return]


def test_errors_no_rule_explains_are_not_an_all_clear(workdir: Path) -> None:
    # the traceback passes through no component's code and names none: no layer can be named
    (workdir / "tb.txt").write_text(traceback("/srv/app/serve.py", "tokenizer_ext"))
    for fmt in ("text", "json", "github"):
        result = llmsched("tb.txt", "-o", fmt, cwd=workdir)
        assert result.returncode == 0, result.stderr
        flat = re.sub(r"[\s│]+", " ", result.stdout)  # the verdict panel wraps its lines
        assert ALL_CLEAR not in flat and "not an all-clear" in flat
        assert "tb.txt:4: ModuleNotFoundError: No module named 'tokenizer_ext'" in result.stdout
    verdict = json.loads(llmsched("tb.txt", "-o", "json", cwd=workdir).stdout)["verdict"]
    assert verdict["layer"] is None and len(verdict["unexplained_errors"]) == 1


def test_an_unknown_error_raised_in_vllms_code_names_vllm_weakly(workdir: Path) -> None:
    frame = "/usr/local/lib/python3.10/site-packages/vllm/_custom_ops.py"
    (workdir / "tb.txt").write_text(traceback(frame, "vllm._C"))
    verdict = json_verdict(workdir, "tb.txt", 1)
    assert (verdict["layer"], verdict["rule"]) == ("vllm", None)
    assert verdict["confidence"] <= 0.1
    assert "tb.txt:4" in verdict["summary"]


def test_a_described_symptom_the_evidence_does_not_show_is_not_an_all_clear(
    workdir: Path,
) -> None:
    (workdir / "paste.txt").write_text(
        "After scaling out, the worker pods stay pending forever.\n"
        "$ kubectl get pods\n"
        "NAME       READY   STATUS    RESTARTS   AGE\n"
        "vllm-0     1/1     Running   0          10m\n"
        "vllm-0-1   1/1     Running   0          10m\n"
    )
    result = llmsched("paste.txt", "-o", "json", cwd=workdir)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    # the layer the paste is set in, as a guess that says the evidence does not show it
    assert (report["verdict"]["layer"], report["verdict"]["rule"]) == ("kubernetes", None)
    assert report["verdict"]["basis"].startswith("a guess")
    assert "not an all-clear" in report["verdict"]["summary"]
    assert "paste.txt:1" in report["verdict"]["summary"]
    assert report["triage"][0]["status"] == "not shown by the evidence"
    flat = re.sub(r"[\s│]+", " ", llmsched("paste.txt", cwd=workdir).stdout)
    assert ALL_CLEAR not in flat and "does not show the symptom described" in flat


def test_a_layer_named_without_a_rule_still_lists_the_errors(workdir: Path) -> None:
    text = "I run vllm serve and it fails:\n" + traceback("/srv/app/serve.py", "tokenizer_ext")
    (workdir / "tb.txt").write_text(text)
    verdict = json_verdict(workdir, "tb.txt", 1)
    assert (verdict["layer"], verdict["rule"]) == ("vllm", None)
    assert verdict["unexplained_errors"] == [
        "tb.txt:5: ModuleNotFoundError: No module named 'tokenizer_ext'"
    ]
