"""Manifests as files: reading them with line marks, and what their objects run.

`sources.load_manifests` reads files, directories and stdin (`inputs`) into objects that
know their lines (`yaml_marks`); `kinds.extract_workload` walks one object (one walker per
kind) to its pod templates, containers and the vLLM / Ray commands they run (`commands`,
`shell`); `gpu_pinning` says which GPU a pod is pinned to. Nothing here judges or does
network I/O: rules (`engine/`) read these views.
"""
