"""A container's literal env and Kubernetes' `$(VAR)` expansion."""

from __future__ import annotations

import pytest

from llmsched.manifest.env import env_bool, expand_k8s_vars, literal_env


def test_k8s_variable_expansion() -> None:
    env = literal_env(
        [
            {"name": "A", "value": "one"},
            {"name": "B", "value": "$(A)-two"},
            {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "C", "value": "$(D)"},  # D is later: stays as written
            {"name": "D", "value": "four"},
        ]
    )
    assert env == {"A": "one", "B": "one-two", "C": "$(D)", "D": "four"}
    assert expand_k8s_vars("$(A)/$(S)/$$(A)/$$/$(B)", env) == "one/$(S)/$(A)/$/one-two"


def test_env_that_is_not_a_list_is_empty() -> None:
    assert literal_env({"A": "b"}) == {}
    assert literal_env([{"name": "E"}, "junk"]) == {"E": ""}


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("1", True),
        (" TRUE ", True),
        ("yes", True),
        ("0", False),
        ("False", False),
        ("no", False),
        ("maybe", None),
        (None, None),
    ],
)
def test_env_bool(value: str | None, parsed: bool | None) -> None:
    assert env_bool(value) is parsed
