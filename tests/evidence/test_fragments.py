"""Pod-spec excerpts that are not whole objects, wrapped for the linter: which shapes are
excerpts, at which level, and how the wrapped lines map back to the pasted ones."""

from __future__ import annotations

import textwrap

import yaml

from llmsched.evidence.fragments import NAME, find_fragments
from llmsched.evidence.normalise import split_lines
from llmsched.evidence.observations import Fragment
from llmsched.evidence.sniff import sniff_text

# shapes as the Kubernetes API documents them (core/v1 Container, PodSpec; apps/v1
# DeploymentSpec), with a vLLM container as the vLLM docs' Kubernetes example writes it
CONTAINERS = """\
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
        resources:
          limits:
            nvidia.com/gpu: 1
        livenessProbe:
          httpGet: {path: /health, port: 8000}
"""


def fragments(text: str) -> list[Fragment]:
    return find_fragments(split_lines(text), "paste.txt", [])


def test_a_containers_list_in_prose_is_a_container_level_excerpt() -> None:
    text = "Here is the spec we run:\n```yaml\n" + CONTAINERS + "```\nIt restarts.\n"
    (found,) = fragments(text)
    assert found.level == "container"  # `containers:` alone: the pod's other keys unseen
    assert (found.first_line, found.end - found.start) == (3, 9)
    pod = yaml.safe_load(found.text)
    assert (pod["kind"], pod["metadata"]["name"]) == ("Pod", NAME)
    excerpt = yaml.safe_load(textwrap.dedent(CONTAINERS))
    assert pod["spec"]["containers"] == excerpt["containers"]
    wrapped = found.text.splitlines()
    probe = next(i for i, t in enumerate(wrapped, 1) if "livenessProbe" in t)
    assert found.original_line(probe) == 10  # the pasted line of `livenessProbe:`
    assert found.original_line(1) == found.first_line  # a wrapper line: the excerpt's start


def test_one_container_without_a_dash_is_wrapped_as_a_list_item() -> None:
    text = "name: vllm\nimage: vllm/vllm-openai:v0.8.5\ncommand: [vllm, serve, m]\n"
    (found,) = fragments(text)
    pod = yaml.safe_load(found.text)
    assert found.level == "container"
    assert pod["spec"]["containers"] == [yaml.safe_load(text)]


def test_a_pod_spec_with_more_than_containers_is_pod_level() -> None:
    text = (
        "spec:\n  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists}\n"
        "  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.8.5\n"
    )
    (found,) = fragments(text)
    pod = yaml.safe_load(found.text)
    assert found.level == "pod" and pod["kind"] == "Pod"
    assert pod["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_a_deployment_spec_is_controller_level() -> None:
    text = (
        "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n"
        "      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
    )
    (found,) = fragments(text)
    deployment = yaml.safe_load(found.text)
    assert found.level == "controller" and deployment["kind"] == "Deployment"
    assert deployment["spec"]["replicas"] == 2


def test_yaml_that_is_no_pod_spec_is_no_excerpt() -> None:
    serve_config = (
        "applications:\n- name: llm\n  import_path: app:deployment\n"
        "  deployments:\n  - name: VLLMDeployment\n    ray_actor_options: {num_gpus: 1}\n"
    )
    assert fragments(serve_config) == []
    assert fragments("name: a\nimage: [unclosed\n") == []


def test_a_whole_object_is_a_manifest_not_an_excerpt() -> None:
    whole = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + textwrap.indent(
        textwrap.dedent(CONTAINERS), "  "
    )
    sniffed = sniff_text("The pod we apply:\n" + whole)
    assert sniffed.manifest_texts and sniffed.fragments == []
