"""`import llmsched.render` must stay light: rich and xml load only when a format renders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import llmsched

HEAVY = ["rich", "xml.etree.ElementTree", "kubernetes", "ray", "cel"]


def _modules_loaded_after(code: str) -> dict[str, bool]:
    repo_root = str(Path(llmsched.__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([repo_root, os.environ.get("PYTHONPATH", "")]),
    }
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_render_loads_no_heavy_module() -> None:
    loaded = _modules_loaded_after("import llmsched.render")
    assert not any(loaded.values()), loaded


def test_rendering_text_loads_rich_only_then() -> None:
    loaded = _modules_loaded_after(
        "from llmsched.model import Report\n"
        "from llmsched.render import render\n"
        "render(Report(tool_version='0'), 'text')"
    )
    assert loaded["rich"]
    assert not loaded["kubernetes"]
