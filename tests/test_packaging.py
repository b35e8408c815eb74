"""The wheel carries the rules: installed outside the checkout, it lists and runs every rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_rules_and_lints_from_elsewhere(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    (wheel,) = wheels.glob("llmsched-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = [n for n in names if n.startswith("llmsched/_rules/lint/") and n.endswith(".yaml")]
    assert len(shipped) == len(list((ROOT / "rules" / "lint").glob("*.yaml")))
    assert "llmsched/evidence/symptoms.yaml" in names  # free-text triage reads it at run time
    assert "llmsched/_rules/schema.json" in names
    for catalogue in (ROOT / "llmsched" / "knowledge").rglob("*.yaml"):
        stem = catalogue.relative_to(ROOT).with_suffix("").as_posix()
        assert {f"{stem}.yaml", f"{stem}.schema.json"} <= set(names), stem

    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: vllm\n    image: vllm/vllm-openai:v0.10.1\n"
        "    args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '2']\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import llmsched, sys; print(llmsched.__file__)"
    where = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(target)), where
    listed = subprocess.run([sys.executable, "-m", "llmsched", "rules", "-o", "json"], cwd=elsewhere,
                            env=env, capture_output=True, text=True, check=True).stdout
    assert len([r for r in json.loads(listed) if r["kind"] == "lint"]) == 30
    linted = subprocess.run([sys.executable, "-m", "llmsched", "checklist", "lint", "pod.yaml",
                             "-o", "json"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert linted.returncode == 1, linted.stderr
    assert "K8S001" in {f["rule"] for f in json.loads(linted.stdout)["findings"]}


def test_readme_lists_every_lint_rule() -> None:
    readme = (ROOT / "README.md").read_text()
    for path in sorted((ROOT / "rules" / "lint").glob("*.yaml")):
        code, name = path.stem.split("-", 1)
        assert f"| {code} | {name} |" in readme, path.stem
