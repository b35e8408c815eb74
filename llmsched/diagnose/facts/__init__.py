"""The three layers' views, joined: what diagnose rules judge.

Inputs are a Snapshot (live collection or a bundle) and/or sniffed evidence (pasted text).
Both are folded into one `Facts`: pods, nodes, Ray clusters, vLLM endpoints, every
observation, and `cluster`, the cross-layer joins (Kubernetes GPUs vs Ray's GPU view...).
Each subject is a plain dict (CEL variables) plus the observations it can quote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from llmsched.diagnose.facts.joins import cluster_subject, link_nodes
from llmsched.diagnose.facts.nodes import node_from_describe, node_from_object
from llmsched.diagnose.facts.pods import (
    attach_pod_observation,
    new_pod,
    pod_from_describe,
    pod_from_object,
    pod_key,
)
from llmsched.diagnose.facts.ray import merge_ray_observation, ray_base, ray_from_view
from llmsched.diagnose.facts.setting import layer_setting
from llmsched.diagnose.facts.subjects import Facts, Subject
from llmsched.diagnose.facts.vllm import (
    add_metrics_endpoint,
    attach_endpoint_observation,
    endpoint_base,
    merge_engine_metrics,
)
from llmsched.evidence.observations import Observation, SniffResult
from llmsched.evidence.signatures import match_message
from llmsched.evidence.sniff import sniff_text
from llmsched.model import InputError, Location
from llmsched.snapshot import Snapshot

__all__ = ["Facts", "Subject", "build_facts"]


def build_facts(snapshot: Snapshot | None, sniffed: SniffResult | None) -> Facts:
    facts = Facts()
    if snapshot is not None:
        _from_snapshot(facts, snapshot)
    if sniffed is not None:
        facts.sources.extend(sniffed.sources)
        _from_observations(facts, sniffed.observations)
        for metrics in sniffed.metrics:
            add_metrics_endpoint(facts, metrics)
    link_nodes(facts)
    facts.cluster = cluster_subject(facts)
    # the layer the paste is set in (Ray's APIs, no Kubernetes artifact): see setting.py
    facts.cluster.data["set_in"] = (
        layer_setting(sniffed.prose, sniffed.observations) if sniffed is not None else None
    )
    return facts


def _readable(
    facts: Facts, items: list[dict[str, Any]], kind: str, read: Callable[[Any], Any]
) -> Iterator[Any]:
    """`read` of each item; an item not shaped as the API returns it (a hand-edited or
    damaged bundle: `metadata: 5`, `containers: "x"`) is an input error naming it, and the
    other items are still read."""
    for index, item in enumerate(items):
        try:
            yield read(item)
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
            where = Location(f"k8s/{kind}.json", None)
            facts.errors.append(
                InputError(f"items[{index}] is not a readable object ({exc})", where)
            )


def _event_shaped(event: Any) -> dict[str, Any]:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    if not isinstance(involved, dict):
        raise TypeError(f"involvedObject is {type(involved).__name__}, not an object")
    return dict(event)


def _from_snapshot(facts: Facts, snapshot: Snapshot) -> None:
    k8s = snapshot.kubernetes
    if k8s is not None:
        for item in _readable(facts, k8s.items("pods"), "pods", pod_from_object):
            key = pod_key(item["namespace"], item["name"])
            facts.pods[key] = Subject("pod", key, item)
        for item in _readable(facts, k8s.items("nodes"), "nodes", node_from_object):
            facts.nodes[item["name"]] = Subject("node", item["name"], item)
        events = [*k8s.items("events"), *k8s.items("events.k8s.io")]
        for event in _readable(facts, events, "events", _event_shaped):
            involved = event.get("involvedObject") or event.get("regarding") or {}
            message = str(event.get("message") or event.get("note") or "")
            reason = str(event.get("reason", ""))
            text = f"{event.get('type', '')} {reason}: {message}".strip()
            for match in match_message(message) or []:
                observation = Observation(
                    signature=match.signature.id,
                    layer=match.signature.layer,
                    source="k8s-event",
                    text=text,
                    location=None,
                    fields={
                        **match.fields,
                        "pod": involved.get("name"),
                        "namespace": involved.get("namespace"),
                        "reason": reason,
                        "count": event.get("count"),
                        "kind": involved.get("kind"),
                    },
                )
                facts.observations.append(observation)
                attach_pod_observation(facts, observation)
    for cluster in snapshot.ray:
        if cluster.view is not None:
            key = f"ray:{cluster.name}"
            facts.ray[key] = Subject("ray", key, ray_from_view(cluster.view, cluster.address))
    for endpoint in snapshot.vllm:
        data = endpoint_base(endpoint.name, endpoint.url)
        data["healthy"] = endpoint.healthy
        data["reachable"] = endpoint.state != "failed"
        if endpoint.metrics is not None:
            for engine in endpoint.metrics.engines.values():
                merge_engine_metrics(data, engine)
            data["metrics_generation"] = endpoint.metrics.generation
            data["metrics_interval_s"] = endpoint.metrics.interval_s
        data["metrics_scrapes"] = list(endpoint.scrapes)
        version = endpoint.version
        if isinstance(version, Mapping):
            data["version"] = version.get("version")
        facts.endpoints[endpoint.name] = Subject("endpoint", endpoint.name, data)
    if k8s is not None:  # after the endpoints: a pod's log joins its scraped endpoint
        for log in k8s.logs:
            _from_log(facts, log.namespace, log.pod, log.container, log.text)


def _from_log(facts: Facts, namespace: str, pod: str, container: str, text: str) -> None:
    path = f"k8s/logs/{namespace}/{pod}/{container}.log"
    result = sniff_text(text, path)
    for observation in result.observations:
        fields = {**observation.fields, "pod": pod, "namespace": namespace, "container": container}
        enriched = Observation(
            observation.signature,
            observation.layer,
            observation.source,
            observation.text,
            observation.location,
            fields,
        )
        facts.observations.append(enriched)
        attach_pod_observation(facts, enriched)
        if enriched.layer == "vllm":
            scraped = f"{namespace}_{pod}"  # the collectors' name for a discovered pod
            key = scraped if scraped in facts.endpoints else f"pod:{namespace}/{pod}"
            attach_endpoint_observation(facts, key, enriched)


def _from_observations(facts: Facts, observations: Iterable[Observation]) -> None:
    first_path: dict[tuple[str, str], str | None] = {}
    for observation in observations:
        path = observation.location.path if observation.location else None
        seen = first_path.setdefault((observation.signature, observation.text), path)
        if seen != path:  # the same line pasted in two inputs is one fact, counted once
            continue
        facts.observations.append(observation)
        fields = observation.fields
        signature = observation.signature
        if signature == "k8s.pod.status":
            pod = pod_from_describe(fields)
            key = pod_key(pod["namespace"], pod["name"])
            existing = facts.pods.get(key)
            if existing is None:
                facts.pods[key] = Subject("pod", key, pod, [observation], observation.location)
            else:
                existing.data.update({k: v for k, v in pod.items() if v not in (None, 0, [], {})})
                existing.observations.append(observation)
            continue
        if signature == "k8s.node.gpus":
            node = node_from_describe(fields)
            facts.nodes[node["name"]] = Subject(
                "node", node["name"], node, [observation], observation.location
            )
            continue
        # vLLM's Ray executor reports Ray placement facts: the Ray subject judges them too
        if observation.layer == "ray" or signature.startswith(("ray.", "vllm.ray.")):
            key = f"ray:{observation.location.path if observation.location else 'text'}"
            subject = facts.ray.get(key)
            if subject is None:  # built once per input, not once per line
                subject = facts.ray[key] = Subject("ray", key, ray_base(None))
            subject.observations.append(observation)
            if subject.location is None:
                subject.location = observation.location
            merge_ray_observation(subject.data, observation)
        if observation.layer == "kubernetes" or signature.startswith(("k8s.", "deviceplugin.")):
            if signature == "k8s.node.row":
                continue
            if fields.get("pod") or fields.get("kind") == "Pod":
                attach_pod_observation(facts, observation)
            else:
                _attach_unowned(facts, observation)
        if observation.layer == "vllm" or signature.startswith(("vllm.", "cuda.", "nccl.")):
            if fields.get("pod"):
                attach_pod_observation(facts, observation)
            path = observation.location.path if observation.location else "text"
            key = f"log:{fields.get('pod') or fields.get('service') or path}"
            attach_endpoint_observation(facts, key, observation)


# Kubernetes messages about the node or its GPU stack rather than about one pod
_NODE_LEVEL = ("deviceplugin.", "gpuoperator.", "node.")


def _attach_unowned(facts: Facts, observation: Observation) -> None:
    """A Kubernetes message with no pod named (a FailedScheduling line pasted alone): it is
    about some pod all the same, so an unnamed pod carries it; node-level messages go to the
    cluster."""
    if observation.signature.startswith(_NODE_LEVEL) or observation.fields.get("kind") == "Node":
        facts.cluster.observations.append(observation)
        return
    name = observation.fields.get("name") or "(pod not named)"
    key = pod_key(observation.fields.get("namespace"), name)
    subject = facts.pods.setdefault(
        key, Subject("pod", key, new_pod(observation.fields.get("namespace"), str(name)))
    )
    subject.observations.append(observation)
    if subject.location is None:
        subject.location = observation.location
