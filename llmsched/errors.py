"""One error hierarchy; the CLI turns any of these into one line on stderr and exit 2."""

from __future__ import annotations

from llmsched.model import Location


class LlmschedError(Exception):
    """Bad input or usage: reported as one line, exit code 2, never a traceback."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class InputFileError(LlmschedError):
    """A file the user gave cannot be read or parsed."""


class ConfigError(LlmschedError):
    """`.llmsched.yaml` / `[tool.llmsched]` / flags are wrong."""


class RuleError(LlmschedError):
    """A rule file is malformed or its expression does not compile."""
