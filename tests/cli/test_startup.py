"""Start-up cost: a command loads only its own module; `--help` still lists them all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from llmsched.cli import main
sys.argv = ["llmsched", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.startswith("llmsched."))
sys.stderr.write("\\nMODULES " + json.dumps(loaded) + "\\n")
"""


def _modules(tmp_path: Path, *args: str) -> tuple[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return done.stdout, json.loads(line.removeprefix("MODULES "))


def test_lint_does_not_load_other_commands(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    _, loaded = _modules(tmp_path, "checklist", "lint", "m.yaml")
    assert "llmsched.engine.lint" in loaded
    assert not [m for m in loaded if m.startswith(("llmsched.cli.replay", "llmsched.cli.collect",
                                                   "llmsched.cli.diagnose", "llmsched.replay"))]


def test_help_lists_every_command(tmp_path: Path) -> None:
    out, _ = _modules(tmp_path, "--help")
    for command in ("checklist", "rules", "replay", "collect", "diagnose"):
        assert command in out


def test_registering_again_adds_each_command_once() -> None:
    # in-process callers (tests, CliRunner) register before every run; repeats would pile up
    probe = (
        "from llmsched.cli import _register, app\n"
        "_register(['llmsched', 'diagnose']); _register(); _register()\n"
        "print(sorted(i.name for i in (*app.registered_groups, *app.registered_commands)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == str(sorted(("checklist", "rules", "replay", "collect",
                                              "diagnose")))
