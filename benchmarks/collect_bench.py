"""Collect a generated 5k-pod / 50k-event cluster from the loopback API server.

Prints the requests made per kind and the seconds taken by the listing, the redaction
and the bundle write. Run: ``python benchmarks/collect_bench.py [--pods N --events N]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "collect"))
sys.path.insert(0, str(HERE.parent))

from fakes.kube_api import FakeKubeApi, FakeKubeState, write_kubeconfig  # noqa: E402
from fakes.kube_fixture import ABSENT_CRDS, TOKEN, recorded_state  # noqa: E402

from llmsched.collect.kube_connect import connect  # noqa: E402
from llmsched.collect.kubernetes import KubernetesCollector  # noqa: E402
from llmsched.snapshot import Snapshot  # noqa: E402


def generated_state(pods: int, events: int, namespaces: int) -> FakeKubeState:
    """The recorded objects, cloned with new names over ``namespaces`` namespaces."""
    recorded = recorded_state()
    objects = dict(recorded.objects)

    def clone(kind: str, count: int) -> list[dict]:
        templates = recorded.objects[kind]
        out = []
        for i in range(count):
            item = copy.deepcopy(templates[i % len(templates)])
            meta = item["metadata"]
            meta["name"] = f"{meta['name']}-{i:05d}"
            meta["namespace"] = f"team-{i % namespaces:02d}"
            meta["uid"] = f"{i:08d}-0000-4000-8000-000000000000"
            if "involvedObject" in item:
                item["involvedObject"]["name"] = f"pod-{i % pods:05d}"
                item["involvedObject"]["namespace"] = meta["namespace"]
            out.append(item)
        return out

    objects["pods"] = clone("pods", pods)
    objects["events"] = clone("events", events)
    objects["nodes"] = [
        {**copy.deepcopy(n), "metadata": {**n["metadata"], "name": f"{n['metadata']['name']}-{i}"}}
        for i in range(50)
        for n in recorded.objects["nodes"]
    ]
    return FakeKubeState(objects=objects, faults=dict(ABSENT_CRDS), token=TOKEN)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--events", type=int, default=50000)
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--page-size", type=int, default=500)
    args = parser.parse_args()

    state = generated_state(args.pods, args.events, args.namespaces)
    with FakeKubeApi(state) as api, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = write_kubeconfig(Path(tmp) / "kubeconfig", api.url, state.token)
        collector = KubernetesCollector(
            connect(str(kubeconfig)), namespaces=None, page_size=args.page_size, logs_tail=None
        )
        started = time.perf_counter()
        data = collector.collect()
        listed = time.perf_counter() - started
        snapshot = Snapshot(collected_at="2026-01-01T00:00:00Z", kubernetes=data)
        started = time.perf_counter()
        bundle = snapshot.save(Path(tmp) / "bundle.tgz")
        saved = time.perf_counter() - started
        size = bundle.stat().st_size
        started = time.perf_counter()
        Snapshot.load(bundle)
        loaded = time.perf_counter() - started

    per_kind = Counter(path.split("?")[0].rsplit("/", 1)[-1] for _, path in state.seen)
    print(f"cluster: {args.pods} pods, {args.events} events, {len(state.objects['nodes'])} nodes, "
          f"all namespaces, page size {args.page_size}")  # fmt: skip
    print(f"state: {data.state}, errors: {len(data.errors)}")
    print(f"requests: {collector.requests_made} (verbs: {sorted(state.methods())})")
    for kind, count in sorted(per_kind.items()):
        print(f"  {kind:<26} {count:>4} requests")
    print(f"pods collected: {len(data.items('pods'))}, events: {len(data.items('events'))}")
    print(f"list + redact: {listed:.2f} s")
    print(f"bundle write: {saved:.2f} s ({size / 1e6:.1f} MB .tgz), reload: {loaded:.2f} s")
    print(json.dumps({"requests": collector.requests_made, "seconds": round(listed, 3)}))


if __name__ == "__main__":
    main()
