"""Split a POSIX shell script (`sh -c`, a RayJob entrypoint) into simple commands.

`shlex` does the quoting, escapes and operators. What it lacks for a script read
for its commands is supplied by the stream it reads from (`_Script`), which looks at the
lexer's state before handing over each character:
- a backslash-newline outside single quotes is a line continuation (shlex would keep the
  newline as a character), and an unquoted newline ends a command (it is an operator here);
- `#` starts a comment only at the start of a word, and the comment stops before the
  newline (shlex's own comments swallow it, joining two commands);
- `$VAR`, `${VAR}`, `${VAR:-default}` expand from the env when known, `$(...)` stays as
  written; each is handed to shlex as one placeholder character, so its text is never
  re-split or re-quoted, and restored in the words afterwards. Quoted or escaped operator
  characters are placeholders too, so an operator token is always a real operator;
- every character's 0-based line is known, so each word keeps the line it starts on.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

Command = list[tuple[str, int]]  # (word, 0-based line where it starts)

_OPERATOR_CHARS = "();|&\n"  # `&&`, `||`, `;;`, `;`, `&`, `|`, `(`, `)`, newline
_PLACEHOLDER_BASE = 0xF0000  # Unicode plane 15 (private use): never a shell character
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SINGLE_QUOTED = "'"
_ESCAPED = "\\"
_BETWEEN_WORDS = (" ", "c")  # shlex states: whitespace, just after an operator
_UNQUOTED = (" ", "c", "a")  # ... and inside an unquoted word


def shell_commands(text: str, env: Mapping[str, str]) -> list[Command]:
    """Split a POSIX shell script into simple commands of (word, 0-based line).

    Quotes, backslash escapes, `\\` line continuations and comments are honoured;
    `$VAR`/`${VAR}` expand from `env` when known, otherwise stay as written;
    `$(...)` command substitutions stay as written.
    """
    script = _Script(text, env)
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    script.lexer = lexer
    commands: list[Command] = []
    current: Command = []
    while True:
        try:
            token = lexer.get_token()
        except ValueError as exc:  # unterminated quote or trailing backslash: keep what was read
            tail = "\\" if "escaped" in str(exc) else ""
            current.append((script.restore(lexer.token + tail), script.word_line))
            break
        if token is None:
            break
        if token and all(ch in _OPERATOR_CHARS for ch in token):
            if current:
                commands.append(current)
            current = []
        else:
            current.append((script.restore(token), script.word_line))
    if current:
        commands.append(current)
    return commands


class _Script:
    """The character stream shlex reads (see the module docstring)."""

    def __init__(self, text: str, env: Mapping[str, str]) -> None:
        self.text = text
        self.env = env
        self.pos = 0
        self.line = 0
        self.word_line = 0  # line of the last character read between words
        self.lexer: shlex.shlex | None = None
        self._held: list[str] = []  # placeholder index -> text

    def read(self, size: int = 1) -> str:
        # `state` is shlex's undocumented lexer state (" ", "a", "c", a quote, "\\", None),
        # unchanged since the module's posix mode (Python 2.3).
        state = self.lexer.state if self.lexer is not None else " "  # type: ignore[attr-defined]
        while True:
            start_line = self.line
            ch = self._next(state)
            if ch is not None:
                break
        if state in _BETWEEN_WORDS:
            self.word_line = start_line
        return ch

    def readline(self) -> str:  # shlex only calls it for comments, which are off
        return ""

    def close(self) -> None:
        pass

    def restore(self, word: str) -> str:
        if not self._held:
            return word
        return "".join(
            self._held[ord(ch) - _PLACEHOLDER_BASE] if ord(ch) >= _PLACEHOLDER_BASE else ch
            for ch in word
        )

    def _next(self, state: str | None) -> str | None:
        """The next character for shlex, or None after skipping a continuation or comment."""
        text, pos = self.text, self.pos
        if pos >= len(text):
            return ""
        ch = text[pos]
        literal = state in (_SINGLE_QUOTED, _ESCAPED)
        if ch == "\\" and not literal and text.startswith("\n", pos + 1):
            self._advance(2)
            return None
        if ch == "#" and state in _BETWEEN_WORDS:
            end = text.find("\n", pos)
            self._advance((len(text) if end < 0 else end) - pos)
            return None
        if ch == "\\" and state == '"' and text[pos + 1 : pos + 2] in ("$", "`"):
            self._advance(2)
            return text[pos + 1]
        if ch == "$" and not literal:
            expanded, end = expand_dollar(text, pos, self.env)
            self._advance(end - pos)
            return expanded if expanded == "$" else self._placeholder(expanded)
        self._advance(1)
        if ord(ch) >= _PLACEHOLDER_BASE or (ch in _OPERATOR_CHARS and state not in _UNQUOTED):
            return self._placeholder(ch)  # quoted or escaped: a word character
        return ch

    def _advance(self, count: int) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + count)
        self.pos += count

    def _placeholder(self, text: str) -> str:
        self._held.append(text)
        return chr(_PLACEHOLDER_BASE + len(self._held) - 1)


def expand_dollar(text: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """Expand the `$...` at text[i]; return (replacement, index after it)."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt == "(":
        depth, j = 0, i + 1
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        return text[i:j], j
    if nxt == "{":
        end = text.find("}", i + 2)
        if end < 0:
            return text[i:], len(text)
        body = text[i + 2 : end]
        name_match = _SHELL_NAME.match(body)
        if name_match:
            name = name_match.group()
            rest = body[len(name) :]
            if name in env and (not rest or rest.startswith((":-", "-"))):
                return env[name], end + 1
            if name not in env and rest.startswith((":-", "-")):
                return rest.split("-", 1)[1], end + 1
        return text[i : end + 1], end + 1
    match = _SHELL_NAME.match(text, i + 1)
    if match and match.group() in env:
        return env[match.group()], match.end()
    if match:
        return text[i : match.end()], match.end()
    return "$", i + 1
