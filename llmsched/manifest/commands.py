"""Find the `vllm serve` / api_server and `ray start` a container runs, with their arguments.

A container's command and args are read as a word list; `sh -c SCRIPT` is split into its
simple commands (`shell.py`); an image whose ENTRYPOINT is vLLM's server takes bare `args`
as vLLM arguments. A `--config` file found among the inputs is merged under the flags.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.knowledge.vllm.args import merge_config, parse_engine_kwargs, parse_vllm_argv
from llmsched.knowledge.vllm.versions import vllm_version_from_image
from llmsched.manifest.env import env_bool, expand_k8s_vars
from llmsched.manifest.shell import shell_commands
from llmsched.manifest.views import ArgLocation, Path, VllmInvocation

_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_API_SERVER_MODULES = {
    "vllm.entrypoints.openai.api_server",
    "vllm.entrypoints.api_server",
    "dynamo.vllm",  # NVIDIA Dynamo's vLLM worker: vLLM engine args (ai-dynamo/dynamo deploy/*.yaml)
}
_MULTI_NODE_SCRIPT = "multi-node-serving.sh"

Found = tuple[VllmInvocation | None, dict[str, Any] | None]  # (vLLM, ray start params)


class CommandFinder:
    """Reads commands; `config_files` are the vLLM `--config` files among the inputs."""

    def __init__(self, config_files: Mapping[str, Mapping[str, Any]]) -> None:
        self.config_files = config_files

    def in_container(
        self,
        data: Mapping[str, Any],
        path: Path,
        image: str | None,
        env: Mapping[str, str],
        *,
        entrypoint_args: bool = False,
    ) -> Found:
        """`entrypoint_args`: bare `args` go to vLLM whatever the image (KServe huggingface)."""
        tokens: list[tuple[str, ArgLocation]] = []
        for key in ("command", "args"):
            items = data.get(key)
            if isinstance(items, list):
                tokens += [
                    (expand_k8s_vars(str(item), env), ArgLocation((*path, key, index)))
                    for index, item in enumerate(items)
                    if item is not None
                ]
        if not tokens:
            return None, None
        words = [t for t, _ in tokens]
        has_command = isinstance(data.get("command"), list) and bool(data.get("command"))
        shell_at = shell_script_index(words)
        if shell_at is not None:
            text, location = tokens[shell_at]
            return self.in_shell(text, location.path, image, env)
        found = find_vllm_argv(words)
        ray_start = find_ray_start(words)
        if found is not None:
            start, positional = found
            return self.invocation(
                tokens[start:], positional, "container", tokens[start - 1][1], image, env
            ), ray_start
        if not has_command and (entrypoint_args or is_vllm_server_image(image)):
            return self.invocation(
                tokens, True, "entrypoint", ArgLocation((*path, "args")), image, env
            ), ray_start
        return None, ray_start

    def in_shell(self, text: str, path: Path, image: str | None, env: Mapping[str, str]) -> Found:
        """The first vLLM server and the first `ray start` of a script at `path`."""
        vllm: VllmInvocation | None = None
        ray_start: dict[str, Any] | None = None
        for command in shell_commands(text, env):
            words = [w for w, _ in command]
            if ray_start is None:
                ray_start = find_ray_start(words)
            found = find_vllm_argv(words) if vllm is None else None
            if found is not None:
                start, positional = found
                tokens = [(w, ArgLocation(path, line)) for w, line in command[start:]]
                vllm = self.invocation(
                    tokens,
                    positional,
                    "shell",
                    ArgLocation(path, command[start - 1][1]),
                    image,
                    env,
                )
        return vllm, ray_start

    def invocation(
        self,
        tokens: Sequence[tuple[str, ArgLocation]],
        positional: bool,
        source: str,
        location: ArgLocation,
        image: str | None,
        env: Mapping[str, str],
    ) -> VllmInvocation:
        parsed = parse_vllm_argv([t for t, _ in tokens], positional_model=positional)
        locations = {dest: tokens[index][1] for dest, index in parsed.token_index.items()}
        config_file: str | None = None
        config_path = parsed.explicit.get("config")
        if isinstance(config_path, str):
            config = self.config_files.get(config_path) or self.config_files.get(
                posixpath.basename(config_path)
            )
            if config is not None:
                config_file = config_path
                from_config = parse_engine_kwargs(config, abbreviations=True)
                where = locations.get("config", location)
                for dest in from_config.explicit:
                    locations.setdefault(dest, where)
                parsed = merge_config(parsed, from_config)
        return VllmInvocation(
            model=parsed.model,
            explicit=parsed.explicit,
            locations=locations,
            source=source,
            location=location,
            version=vllm_version_from_image(image),
            image=image,
            unknown=parsed.unknown,
            errors=parsed.errors,
            use_v1=env_bool(env.get("VLLM_USE_V1")),
            config_file=config_file,
        )


def find_vllm_argv(words: Sequence[str]) -> tuple[int, bool] | None:
    """Index where vLLM's own arguments start, and whether a positional model is allowed.

    `vllm serve ...` (behind `exec`, `env A=b`, `uv run`, a path...) and
    `python -m vllm.entrypoints.openai.api_server ...`.
    """
    for index, word in enumerate(words[:-1]):
        if posixpath.basename(word) == "vllm" and words[index + 1] == "serve":
            return index + 2, True
        if word == "-m" and words[index + 1] in _API_SERVER_MODULES:
            return index + 2, False
    return None


def find_ray_start(words: Sequence[str]) -> dict[str, Any] | None:
    """`ray start --head --num-gpus=0 ...` -> {"head": True, "num-gpus": "0", ...}.

    The keys and string values follow KubeRay's rayStartParams. vLLM's
    `multi-node-serving.sh leader|worker` (which runs `ray start`) counts too.
    """
    for index, word in enumerate(words[:-1]):
        if posixpath.basename(word) == "ray" and words[index + 1] == "start":
            return _ray_params_from_argv(words[index + 2 :])
        if posixpath.basename(word) == _MULTI_NODE_SCRIPT:
            role = words[index + 1]
            params = _ray_params_from_argv(words[index + 2 :])
            if role == "leader":
                params["head"] = True
            return params
    return None


def _ray_params_from_argv(args: Sequence[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("--"):
            key, sep, value = word[2:].partition("=")
            key = key.replace("_", "-")
            if sep:
                params[key] = value
            elif index + 1 < len(args) and not args[index + 1].startswith("-"):
                params[key] = args[index + 1]
                index += 1
            else:
                params[key] = True
        index += 1
    return params


def shell_script_index(words: Sequence[str]) -> int | None:
    """`sh -c SCRIPT`, `bash -lc SCRIPT`, `/bin/bash -ec SCRIPT`: index of SCRIPT. A `--`
    right after the option ends the options (`bash -lc -- SCRIPT`): the script follows it."""
    if not words or posixpath.basename(words[0]) not in _SHELLS:
        return None
    for index in range(1, len(words)):
        word = words[index]
        if not word.startswith("-") or word.startswith("--"):
            return None
        if "c" in word[1:]:
            script = index + 2 if words[index + 1 : index + 2] == ["--"] else index + 1
            return script if script < len(words) else None
    return None


def is_vllm_server_image(image: str | None) -> bool:
    """Images whose ENTRYPOINT is vLLM's OpenAI server (so bare `args` are vLLM args)."""
    if not image:
        return False
    repo = image.partition("@")[0]
    last = repo.rsplit("/", 1)[-1].partition(":")[0].lower()
    return "vllm-openai" in last or "huggingfaceserver" in last
