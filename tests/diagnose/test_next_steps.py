"""Next steps are printed whole, filled with what the evidence names, and every printed
`llmsched` command parses (`llmsched.diagnose.next_steps`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from llmsched.cli import _register, app
from llmsched.diagnose.next_steps import PLACEHOLDER, fill_line

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests/rules/diagnose_cases"
BAD_CASES = sorted(p for p in CASES.glob("*/bad-*") if not p.name.endswith(".expect.yaml"))
RULE_STEPS = [
    line.strip()
    for path in sorted((ROOT / "rules/diagnose").glob("*.yaml"))
    for line in path.read_text().split("next_steps:", 1)[-1].splitlines()
    if line.strip().startswith("llmsched ")
]


def parse(argv: list[str]) -> dict[str, object]:
    """Parse `llmsched ARGV` as the CLI would, without running it (UsageError if not)."""
    _register()
    command: click.Command = typer.main.get_command(app)
    ctx = command.make_context("llmsched", list(argv))
    while isinstance(command, click.Group):
        name, sub, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        assert sub is not None and name is not None
        command = sub
        ctx = command.make_context(name, rest, parent=ctx)
    return ctx.params


def diagnose(*args: str) -> str:
    _register()
    result = CliRunner().invoke(app, ["diagnose", "--no-replay", *args], env={"COLUMNS": "80"})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def next_steps(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip() == "next:":
            inside = True
        elif inside and line.startswith(" " * 6):
            lines.append(line.strip())
        else:
            inside = False
    return lines


def test_every_llmsched_command_in_a_rule_parses_once_filled() -> None:
    assert RULE_STEPS  # the rules do suggest llmsched commands
    for step in RULE_STEPS:
        values = {name: "x.tgz" if name == "bundle" else "H100-80GB" if name == "gpu" else "m"
                  for name in PLACEHOLDER.findall(step)}  # fmt: skip
        command = fill_line(step, values).split("#", 1)[0]
        assert parse(shlex.split(command)[1:]), step


@pytest.mark.parametrize("case", BAD_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_printed_next_steps_parse_and_name_what_is_known(case: Path) -> None:
    given = ["--bundle", str(case)] if (case / "manifest.json").exists() else [str(case)]
    steps = next_steps(diagnose(*given))
    for step in steps:
        command = step.split("  #", 1)[0]
        if command.startswith("llmsched "):
            assert not PLACEHOLDER.search(command), step
            parse(shlex.split(command)[1:])
        if step.startswith("# fill in "):
            named, _, template = step.removeprefix("# fill in ").partition(": ")
            assert set(named.split(", ")) == {
                f"<{p}>" for p in PLACEHOLDER.findall(template.split("  #", 1)[0])
            }
    report = json.loads(diagnose(*given, "-o", "json"))
    for finding in report["findings"]:
        subject, steps_text = finding["subject"], finding["remediation"]
        if subject["kind"] == "Pod" and subject["namespace"] and "(" not in subject["name"]:
            assert "<pod>" not in steps_text and "<namespace>" not in steps_text, finding["rule"]
            if "Next steps:" in steps_text and "-n " in steps_text:
                assert f"-n {subject['namespace']}" in steps_text


def test_next_steps_are_printed_whole_and_filled() -> None:
    text = diagnose(str(CASES / "DK8S01/bad-describe-pod.txt"))
    lines = next_steps(text)
    assert (
        "kubectl describe pod vllm-llama-7d9c8b6f5-x2k4q -n llm        "
        "# the FailedScheduling event, node by node" in lines
    )
    assert any(len(line) > 80 for line in lines)  # longer than the terminal, kept whole
