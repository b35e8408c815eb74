"""Values pasted code spells out (llmsched/evidence/python_values.py)."""

from __future__ import annotations

import ast

from llmsched.evidence.python_values import UNKNOWN, Parsed, Remote, resources_asked


def test_a_parsed_piece_maps_its_lines_to_the_pasted_ones() -> None:
    tree = ast.parse("x = f(\n    a=1)\ny = 2\n")
    piece = Parsed(tree, (10, 11, 14), ("x = f(", "a=1)", "y = 2"))
    call, second = tree.body
    assert piece.line_of(second) == 14
    assert piece.quote_of(call) == "x = f("
    assert piece.quote_of(call, whole=True) == "x = f( a=1)"


def test_a_remote_reserves_a_gpu_only_when_num_gpus_is_known_and_positive() -> None:
    assert Remote("f", "task", 1, "").fields()["reserves_gpu"] is False
    assert Remote("f", "task", 1, "", {"num_gpus": 0.25}).fields()["reserves_gpu"] is True
    assert Remote("f", "task", 1, "", {"num_gpus": UNKNOWN}).fields()["reserves_gpu"] is None
    assert Remote("f", "task", 1, "", unknown=True).fields()["reserves_gpu"] is None


def test_accelerator_type_becomes_rays_resource_name() -> None:
    asked = resources_asked({"resources": {"special": 2}, "accelerator_type": "H100"})
    assert asked == {"special": 2.0, "accelerator_type:H100": 0.001}
