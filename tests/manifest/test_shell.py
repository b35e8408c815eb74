"""shell_commands: a script split into simple commands of (word, line), on shlex."""

from __future__ import annotations

import pytest

from llmsched.manifest.shell import shell_commands


def words(script: str, env: dict[str, str] | None = None) -> list[list[str]]:
    return [[w for w, _ in command] for command in shell_commands(script, env or {})]


def test_shell_commands_split_quote_and_continue() -> None:
    script = (
        "ray start --head; echo 'a;b' && \\\n"
        '  exec vllm serve "${MODEL:-x/y}" --port ${PORT} $(hostname) # comment\n'
        "echo $UNSET done"
    )
    commands = shell_commands(script, {"PORT": "9000"})
    assert [[w for w, _ in c] for c in commands] == [
        ["ray", "start", "--head"],
        ["echo", "a;b"],
        ["exec", "vllm", "serve", "x/y", "--port", "9000", "$(hostname)"],
        ["echo", "$UNSET", "done"],
    ]
    assert [line for _, line in commands[2]] == [1] * 7
    assert commands[3][0][1] == 2


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("a && b || c ; d & e | f", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]),
        ("(cd /m && vllm serve m)", [["cd", "/m"], ["vllm", "serve", "m"]]),
        ("case x in a) y;; esac", [["case", "x", "in", "a"], ["y"], ["esac"]]),
        ("a\nb\n\nc", [["a"], ["b"], ["c"]]),
        ("a;\n;b", [["a"], ["b"]]),
    ],
)
def test_operators_and_newlines_end_commands(script: str, expected: list[list[str]]) -> None:
    assert words(script) == expected


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # quoted or escaped operator characters are word characters
        ("echo 'a;b' \"c&&d\" e\\;f 'x\ny'", [["echo", "a;b", "c&&d", "e;f", "x\ny"]]),
        # adjacent quoted parts make one word; empty quotes make an empty word
        ("a'b'\"c\" '' \"\"", [["abc", "", ""]]),
        # inside double quotes only \\ \" \$ \` (and a newline) lose their backslash
        ('"a\\"b\\\\c\\$d\\`e\\x"', [['a"b\\c$d`e\\x']]),
        # a backslash outside quotes keeps the next character
        ("\\$HOME \\\\ \\#x", [["$HOME", "\\", "#x"]]),
        # `#` starts a comment only at the start of a word
        ("a#b '#c' #d ; e\nf", [["a#b", "#c"], ["f"]]),
        ("a;#c\nb", [["a"], ["b"]]),
        # redirections are words, as before (only the operators above split commands)
        ("vllm serve m 2>&1 >log", [["vllm", "serve", "m", "2>"], ["1", ">log"]]),
    ],
)
def test_quotes_escapes_and_comments(script: str, expected: list[list[str]]) -> None:
    assert words(script) == expected


def test_variables_expand_from_the_env_and_stay_whole() -> None:
    env = {"HOME": "/home/u", "ARGS": "--a b;c", "EMPTY": ""}
    assert words(
        "x=${HOME:-/r} $HOME ${UNSET:-def} ${UNSET-d2} ${UNSET} $UNSET '$HOME' \"$HOME/x\" $ARGS $EMPTY",
        env,
    ) == [
        [
            "x=/home/u",
            "/home/u",
            "def",
            "d2",
            "${UNSET}",
            "$UNSET",
            "$HOME",
            "/home/u/x",
            "--a b;c",
            "",
        ]
    ]


def test_command_substitution_stays_as_written() -> None:
    assert words('vllm serve m -tp $(nvidia-smi -L | wc -l) --x "$(cat /f; echo)"') == [
        ["vllm", "serve", "m", "-tp", "$(nvidia-smi -L | wc -l)", "--x", "$(cat /f; echo)"]
    ]


def test_each_word_keeps_the_line_it_starts_on() -> None:
    script = "ray start \\\n  --head &&\n'multi\nline' b \\\n c\n# only a comment\nvllm serve m"
    commands = shell_commands(script, {})
    assert commands == [
        [("ray", 0), ("start", 0), ("--head", 1)],
        [("multi\nline", 2), ("b", 3), ("c", 4)],
        [("vllm", 6), ("serve", 6), ("m", 6)],
    ]


def test_lines_after_a_multiline_substitution_count_its_newlines() -> None:
    commands = shell_commands("a $(b\nc) d\ne", {})
    assert commands == [[("a", 0), ("$(b\nc)", 0), ("d", 1)], [("e", 2)]]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("echo 'unterminated\nquote", [["echo", "unterminated\nquote"]]),
        ('echo "open $HOME', [["echo", "open /h"]]),
        ("trailing\\", [["trailing\\"]]),
    ],
)
def test_broken_scripts_keep_what_was_read(script: str, expected: list[list[str]]) -> None:
    assert words(script, {"HOME": "/h"}) == expected


def test_private_use_characters_in_the_script_survive() -> None:
    text = "echo \U000f0000 '\U000f0001'"
    assert words(text) == [["echo", "\U000f0000", "\U000f0001"]]
