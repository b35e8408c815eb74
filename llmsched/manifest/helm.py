"""Helm charts found among the inputs: rendered with `helm template` when `helm` is on
PATH (as kube-linter does), else skipped with a notice; and the `# Source:` comments Helm
writes above each rendered template, mapped back to the template file."""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess

from llmsched.errors import InputFileError
from llmsched.model import Location

CHART_FILE = "Chart.yaml"
RENDER_TIMEOUT_S = 120
SOURCE_COMMENT = re.compile(r"^# Source: (.+?)[ \t]*\r?$", re.MULTILINE)


def is_chart(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, CHART_FILE))


def enclosing_chart(path: str) -> str | None:
    """The chart whose `templates/` holds `path` (a template file or folder named on its
    own: Go templates, not YAML), or None."""
    current = os.path.abspath(path)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return None
        if os.path.basename(current) == "templates" and is_chart(parent):
            shown = os.path.relpath(parent)
            return parent if shown.startswith("..") else shown
        current = parent


def helm_executable() -> str | None:
    return shutil.which("helm")


def skipped_notice(directory: str) -> str:
    return (
        "is a Helm chart; skipped because `helm` is not on PATH (install helm to lint its "
        f"rendered templates, or lint `helm template {directory} | llmsched checklist lint -`)"
    )


def render(directory: str, helm: str) -> str:
    """`helm template DIR` with the chart's default values; `InputFileError` if it fails."""
    try:
        done = subprocess.run(
            [helm, "template", directory],
            capture_output=True,
            text=True,
            timeout=RENDER_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InputFileError(
            f"`helm template` did not finish in {RENDER_TIMEOUT_S} s", Location(directory)
        ) from None
    except OSError as exc:
        raise InputFileError(f"cannot run helm: {exc.strerror or exc}", Location(directory)) from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        raise InputFileError(
            f"`helm template` failed: {reason} (exclude the chart with --exclude, or run "
            "`helm dependency build` first when it names missing dependencies)",
            Location(directory),
        )
    return done.stdout


def template_path(source: str, chart_root: str | None) -> str:
    """Where `# Source: CHART/templates/x.yaml` is on disk.

    Helm names the chart by its `name`, not its folder: with the chart's folder known
    (`chart_root`), the first component is replaced by that folder; else the comment's
    path is kept as Helm wrote it.
    """
    if chart_root is None:
        return source
    _, _, rest = source.replace("\\", "/").partition("/")
    return os.path.normpath(os.path.join(chart_root, rest)) if rest else chart_root


def stdin_chart_root(stdin_filename: str | None, first_source: str | None) -> str | None:
    """For `helm template charts/llm | llmsched checklist lint - --stdin-filename charts/llm`:
    the chart folder when the name given for stdin is a chart, or the folder whose last
    component is the chart the comments name."""
    if not stdin_filename:
        return None
    if is_chart(stdin_filename):
        return stdin_filename
    chart = (first_source or "").replace("\\", "/").split("/", 1)[0]
    if chart and os.path.basename(os.path.normpath(stdin_filename)) == chart:
        return stdin_filename
    return None


class HelmSources:
    """`# Source:` comments Helm writes above each rendered template."""

    def __init__(self, text: str) -> None:
        self._lines: list[int] = []
        self._names: list[str] = []
        if "# Source: " not in text:
            return
        line, position = 0, 0
        for match in SOURCE_COMMENT.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            self._lines.append(line)
            self._names.append(match.group(1))

    def before(self, start_line: int, after_line: int) -> str | None:
        """The last comment above a document starting at `start_line` (0-based) that is
        below the previous document, which ended at `after_line`."""
        index = bisect.bisect_left(self._lines, start_line) - 1
        if index >= 0 and self._lines[index] >= after_line:
            return self._names[index]
        return None
