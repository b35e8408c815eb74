"""A suppression naming no rule warns, naming the object or the line (it used to be
silently ignored); suppressions naming real rules stay quiet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    ignore-check.llmsched.io/K8S0012: "typo of a rule ID"
    ignore-check.llmsched.io/K8S001: "a real rule"
spec:
  containers:
    - name: c
      image: nginx  # llmsched: ignore[K8S99, K8S002] pinned upstream
"""


def test_unknown_rule_in_annotation_or_inline_comment_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    result = subprocess.run(
        [sys.executable, "-m", "llmsched", "checklist", "lint", "pod.yaml", "-o", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2, result.stderr
    assert "pod.yaml:6" in warnings[0] and "Pod/web" in warnings[0] and "K8S0012" in warnings[0]
    assert "pod.yaml:11" in warnings[1] and "K8S99" in warnings[1]
    assert "K8S001'" not in result.stderr and "K8S002]" not in result.stderr
    assert json.loads(result.stdout)["summary"]["warnings"] == [
        w.removeprefix("llmsched: warning: ") for w in warnings
    ]
