"""One real local Ray head for the whole test session, shared by every suite that needs it.

`tests/conftest.py` registers `local_ray`, so the Ray collector's tests and the diagnose
end-to-end tests run against the same cluster (one start, one teardown). The driver leaves a
fixed situation on it (tests may read it, never add to it): four 1-GPU actors hold every
GPU of the 4-GPU head, two more wait, an 8-GPU actor and a STRICT_PACK placement group of
3+3 GPUs can never fit, and a task failed three times. The cluster is kept small (2 CPUs,
100 MB object store) because it shares the machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

HEAD_IP = "127.0.0.2"  # Ray replaces 127.0.0.1 with the routable IP; see the Ray notes

# The test files whose tests start a local Ray cluster (`local_ray`, `ray.init`). A parallel
# run hands each of them whole to one worker (`xdist_scope`), so one cluster is up at a time:
# a head also takes fixed default ports besides the two `local_ray` picks.
# tests/test_ray_fixture.py checks that every test starting Ray is in one of these files.
RAY_TEST_FILES = (
    "tests/collect/test_ray.py",
    "tests/diagnose/test_e2e_joins.py",
    "tests/replay/test_sweep.py",
)


def xdist_scope(nodeid: str) -> str:
    """The unit of work a parallel run gives one worker, its tests run one after another:
    all the tests of `RAY_TEST_FILES` together, any other test alone."""
    return "ray" if nodeid.split("::", 1)[0] in RAY_TEST_FILES else nodeid

DRIVER = textwrap.dedent(
    """
    import sys, ray
    from ray.util.placement_group import placement_group
    ray.init(address=sys.argv[1], log_to_driver=False)

    @ray.remote(num_gpus=1, num_cpus=0)
    class Shard:
        def ping(self):
            return 1

    @ray.remote(num_gpus=8, num_cpus=0)
    class TooBig:
        pass

    @ray.remote(num_cpus=0, max_retries=2, retry_exceptions=True)
    def flaky():
        raise ValueError("boom: shard lost")

    TooBig.options(name="too-big", lifetime="detached").remote()
    placement_group([{"GPU": 3}, {"GPU": 3}], strategy="STRICT_PACK", name="tp6",
                    lifetime="detached")
    shards = [Shard.options(name=f"shard-{i}", lifetime="detached").remote() for i in range(6)]
    ray.get([s.ping.remote() for s in shards[:4]])
    try:
        ray.get(flaky.remote())
    except Exception:
        pass
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HEAD_IP, 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalRay:
    dashboard: str
    gcs: str


def _get(url: str) -> Any:
    return requests.get(url, timeout=5).json()


def _situations_visible(dashboard: str) -> bool:
    try:
        status = _get(f"{dashboard}/api/cluster_status?format=1")["data"]["clusterStatus"]
        failed = _get(
            f"{dashboard}/api/v0/tasks?detail=1&filter_keys=state&filter_predicates=%3D"
            "&filter_values=FAILED"
        )["data"]["result"]["result"]
        actors = _get(f"{dashboard}/api/v0/actors?detail=1")["data"]["result"]["result"]
        events = _get(f"{dashboard}/api/v0/cluster_events")["data"]["result"]["result"]
    except (requests.RequestException, KeyError, TypeError, ValueError):
        return False
    alive = sum(a["state"] == "ALIVE" for a in actors)
    autoscaler_spoke = any("No available node types" in str(e.get("message")) for e in events)
    return (
        "'GPU': 8.0" in status
        and "STRICT_PACK" in status
        and len(failed) >= 3
        and alive >= 4
        and autoscaler_spoke
    )


@pytest.fixture(scope="session")
def local_ray() -> Iterator[LocalRay]:
    pytest.importorskip("ray")
    ray_bin = Path(sys.executable).with_name("ray")
    # not under pytest's basetemp: Ray puts Unix sockets in <temp-dir>/session_<stamp>/sockets/,
    # and an xdist worker's basetemp (.../pytest-N/popen-gw0/) makes the dashboard's
    # dash_MetricsHead socket path longer than AF_UNIX allows (108 bytes, unix(7)); the
    # module then dies at start and `ray start` fails
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-"))
    gcs_port, dash_port = free_port(), free_port()
    # other test suites share the 2 cores: give the dashboard time to come up under load
    # RAY_AUTH_MODE: a token left in ~/.ray by another tool must not turn on token auth for
    # the cluster while the test's driver connects without one
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_DASHBOARD_STARTUP_TIMEOUT_S": "300",
        "RAY_AUTH_MODE": "disabled",
    }
    start = [
        str(ray_bin), "start", "--head", f"--node-ip-address={HEAD_IP}", f"--port={gcs_port}",
        f"--dashboard-host={HEAD_IP}", f"--dashboard-port={dash_port}", "--num-gpus=4",
        "--num-cpus=2", "--object-store-memory=100000000", "--include-dashboard=true",
        "--disable-usage-stats", f"--temp-dir={temp_dir}",
    ]  # fmt: skip
    cluster = LocalRay(f"http://{HEAD_IP}:{dash_port}", f"{HEAD_IP}:{gcs_port}")
    try:
        started = subprocess.run(start, env=env, capture_output=True, text=True, timeout=400)
        if started.returncode != 0:
            pytest.fail(f"ray start failed: {started.stderr[-2000:]}")
        driver = subprocess.run(
            [sys.executable, "-c", DRIVER, cluster.gcs],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert driver.returncode == 0, driver.stderr[-2000:]
        deadline = time.monotonic() + 240
        while not _situations_visible(cluster.dashboard):
            if time.monotonic() > deadline:
                pytest.fail("the dashboard never reported the situations")
            time.sleep(1)
        yield cluster
    finally:
        stop_local_ray(str(temp_dir), cluster.gcs)
        shutil.rmtree(temp_dir, ignore_errors=True)


def stop_local_ray(temp_dir: str, gcs_address: str) -> None:
    """Stop only this cluster's processes, by pid: ``ray stop`` would also stop any other
    Ray running on the machine. Roots are the processes naming our temp dir or GCS
    address; their descendants (workers, agents, dashboard modules) go with them. A
    second pass catches workers the raylet was starting during the first."""
    for _ in range(2):
        _stop_once(temp_dir, gcs_address)


def _stop_once(temp_dir: str, gcs_address: str) -> None:
    parents: dict[int, int] = {}
    roots: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        if temp_dir in cmdline or f"--address={gcs_address}" in cmdline:
            roots.append(pid)
    victims = set(roots)
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in victims} - victims
        grew = bool(children)
        victims |= children
    victims.discard(os.getpid())
    _signal_all(victims, signal.SIGTERM)
    # the GCS server and the autoscaler's monitor.py outlast SIGTERM (seen: still up after
    # 15 s, every teardown); the rest exit within a second. SIGKILL ends them all
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in victims):
        time.sleep(0.2)
    _signal_all(victims, signal.SIGKILL)


def _signal_all(pids: set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
