"""When nothing decides, a paste that says something is wrong and names a layer's world
gets that layer as a guess — Ray first, then Kubernetes, then vLLM — and says it is one;
nothing wrong said, or no layer named, and there is no guess."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from llmsched.cli import _register, app
from llmsched.diagnose.guess import GUESS, setting_guess
from llmsched.model import Location


def prose(*lines: str) -> list[tuple[Location, str]]:
    return [(Location("note.txt", n), line) for n, line in enumerate(lines, 1)]


def test_the_named_layer_is_guessed_when_something_is_said_to_be_wrong() -> None:
    guess = setting_guess(prose("our kubectl rollout of the model server does not work"), [])
    assert guess is not None and (guess.layer, guess.rule, guess.basis) == (
        "kubernetes",
        None,
        GUESS,
    )
    assert guess.best.phrase == "does not work"


def test_ray_goes_before_kubernetes_and_vllm() -> None:
    text = "vllm serve on a RayCluster in kubectl namespace llm fails"
    guess = setting_guess(prose(text), [])
    assert guess is not None and guess.layer == "ray"
    guess = setting_guess(prose("vllm serve m --tensor-parallel-size 2 fails in kubectl logs"), [])
    assert guess is not None and guess.layer == "kubernetes"


def test_no_guess_without_trouble_or_without_a_named_layer() -> None:
    assert setting_guess(prose("we run vllm serve with the default settings"), []) is None
    assert setting_guess(prose("it fails every time"), []) is None
    # prose "deployment" is no Kubernetes Deployment
    assert setting_guess(prose("our deployment fails every time"), []) is None


def test_the_cli_labels_the_guess_and_names_a_candidate(tmp_path: Path) -> None:
    paste = tmp_path / "note.txt"
    paste.write_text("I run vllm serve on one GPU and the server fails after a minute\n")
    _register()
    result = CliRunner().invoke(app, ["diagnose", str(paste), "-o", "json"])
    assert result.exit_code == 1
    verdict = json.loads(result.stdout)["verdict"]
    assert (verdict["layer"], verdict["rule"]) == ("vllm", None)
    assert verdict["confidence"] == 0.05
    assert verdict["basis"].startswith("a guess")


def test_words_name_only_a_layer_the_paste_is_set_in() -> None:
    from llmsched.diagnose.guess import setting_first
    from llmsched.evidence.triage import triage_words

    said = prose(
        "our RayCluster workers are OOM killed at start",
        "ray.init() then the actors load the model",
    )
    words = triage_words(said)
    assert words.candidates, "the words describe a symptom"
    ordered = setting_first(words, said, [])
    # every words candidate of a layer the paste does not name comes after Ray's
    layers = [c.layer for c in ordered.candidates]
    assert layers[0] == "ray"
    assert layers == sorted(layers, key=lambda layer: layer != "ray")


def test_a_guess_goes_before_words_that_point_outside_the_setting() -> None:
    from llmsched.diagnose.guess import setting_first
    from llmsched.evidence.triage import triage_words

    # exit 137 while loading is a pod's memory limit (DK8S13) in Kubernetes; this paste
    # names only vLLM, so the words do not name Kubernetes: vLLM is guessed, they follow
    said = prose("vllm serve keeps restarting: killed with exit code 137 while loading the weights")
    words = triage_words(said)
    assert words.candidates and {c.layer for c in words.candidates} == {"kubernetes"}
    ordered = setting_first(words, said, [])
    guess, *rest = ordered.candidates
    assert (guess.layer, guess.rule, guess.basis) == ("vllm", None, GUESS)
    assert guess.best.phrase == "killed"  # the trouble words
    assert "also fit kubernetes" in str(guess.cause)
    assert tuple(rest) == words.candidates


def test_the_words_keep_their_order_when_the_paste_names_no_layer() -> None:
    from llmsched.diagnose.guess import setting_first
    from llmsched.evidence.triage import triage_words

    said = prose("requests hang with no errors and the waiting queue keeps growing")
    words = triage_words(said)
    assert setting_first(words, said, []).candidates == words.candidates


def test_issue_templates_and_questions_say_something_is_wrong() -> None:
    for text in (
        "[Bug]: vllm serve with two GPUs",
        "### What happened + What you expected to happen\nray start --head",
        "Why does loading a 7b model with vllm take 70GB?",
        "ray autoscaler: upscaling does not happen",
        "为什么vllm占满显存",
    ):
        guess = setting_guess(prose(*text.splitlines()), [])
        assert guess is not None, text


def test_an_ambiguous_messages_ray_cause_needs_ray_in_the_paste() -> None:
    from llmsched.diagnose.guess import setting_first
    from llmsched.evidence.triage import Candidate, WordMatch, WordTriage

    def cause(layer: str, rule: str | None) -> Candidate:
        match = WordMatch("ambiguous", "No CUDA GPUs are available", Location("p.txt", 2), "m", 3)
        return Candidate(rule, layer, 3, (match,), cause=f"a {layer} cause")

    words = WordTriage((cause("ray", "DRAY08"), cause("kubernetes", "DK8S08")), {}, 2, False)
    on_gke = prose("our vllm serve pod on GKE fails", "RuntimeError: No CUDA GPUs are available")
    assert setting_first(words, on_gke, []).candidates[0].layer == "kubernetes"
    on_ray = prose("our Ray Serve app fails", "RuntimeError: No CUDA GPUs are available")
    assert setting_first(words, on_ray, []).candidates[0].layer == "ray"
