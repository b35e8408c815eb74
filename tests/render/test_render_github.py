"""GitHub workflow commands: one per active finding, escaped so the runner reads back
what we meant."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from render_fixtures import make_finding

from llmsched.model import Finding, Location, Report, Severity
from llmsched.render import render
from llmsched.render.github import escape_data, escape_property


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(text: str) -> str:
    return _unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Read a workflow command the way the Actions runner does (`ActionCommand.TryParseV2`)."""
    assert line.startswith("::")
    end = line.index("::", 2)
    head, message = line[2:end], line[end + 2 :]
    command, _, raw_properties = head.partition(" ")
    properties: dict[str, str] = {}
    for pair in filter(None, raw_properties.split(",")):
        key, _, value = pair.partition("=")
        properties[key] = _unescape_property(value)
    return command, properties, _unescape_data(message)


def _finding(**changes: object) -> Finding:
    return make_finding(**{"location": Location("deploy.yaml", 12, 5), **changes})


def test_the_documented_example() -> None:
    out = render(Report(tool_version="0", findings=[_finding()]), "github")
    assert out.splitlines()[0] == (
        "::error file=deploy.yaml,line=12,col=5,title=K8S001 gpu-limit-missing"
        "::no limit%0Afix: set a limit"
    )


def test_escape_data_per_actions_toolkit() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_data("a:b,c") == "a:b,c"
    assert escape_data("%0A") == "%250A"


def test_escape_property_also_escapes_colon_and_comma() -> None:
    assert escape_property("C:\\dir,x\n%") == "C%3A\\dir%2Cx%0A%25"


def test_one_command_per_active_finding_then_summary(report: Report) -> None:
    lines = render(report, "github").splitlines()
    commands = [parse_command(line) for line in lines if line.startswith("::")]
    finding_commands = [
        c for c in commands if c[1]["title"].split()[0] in {f.rule for f in report.findings}
    ]
    assert len(finding_commands) == len(report.active_findings)
    assert all("single-node" not in message for _, _, message in commands)
    assert not lines[-1].startswith("::")
    assert lines[-1].startswith("llmsched: 2 errors, 2 warnings, 1 info in 5 objects from 2 files")


def test_severity_maps_to_command() -> None:
    findings = [_finding(severity=s, rule=f"R{s.value}") for s in Severity]
    lines = render(Report(tool_version="0", findings=findings), "github").splitlines()
    assert [parse_command(line)[0] for line in lines[:3]] == ["notice", "warning", "error"]


def test_location_properties_follow_what_is_known() -> None:
    findings = [
        _finding(location=None),
        _finding(location=Location("a.yaml")),
        _finding(location=Location("a.yaml", 4)),
    ]
    lines = render(Report(tool_version="0", findings=findings), "github").splitlines()
    assert [list(parse_command(line)[1]) for line in lines[:3]] == [
        ["title"],
        ["file", "title"],
        ["file", "line", "title"],
    ]


def test_input_errors_are_annotated(report: Report) -> None:
    lines = render(report, "github").splitlines()
    command, properties, message = parse_command(lines[-2])
    assert command == "error"
    assert properties == {
        "file": "bad.yaml",
        "line": "3",
        "col": "7",
        "title": "llmsched input error",
    }
    assert message == report.errors[0].message


def test_verdict_is_a_notice_first(report: Report) -> None:
    command, properties, message = parse_command(render(report, "github").splitlines()[0])
    assert (command, properties["title"]) == ("notice", "llmsched verdict")
    assert message.startswith("vllm layer · VLLM003 · confidence 80%\n")


@settings(deadline=None)
@given(
    path=st.text(min_size=1, max_size=30),
    message=st.text(max_size=60),
    remediation=st.text(max_size=60),
)
def test_any_text_round_trips_through_the_runner(path: str, message: str, remediation: str) -> None:
    finding = _finding(location=Location(path, 3, 1), message=message, remediation=remediation)
    line = render(Report(tool_version="0", findings=[finding]), "github").split("\n")[0]
    assert "\n" not in line and "\r" not in line
    _, properties, parsed_message = parse_command(line)
    assert properties["file"] == path
    expected = f"{message}\nfix: {remediation}" if remediation else message
    assert parsed_message == expected
