"""Snapshot bundles: directory and .tar.gz, round trips, and unreadable bundles."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmsched.errors import InputFileError
from llmsched.snapshot import (
    PART_ERROR,
    PART_OK,
    STATE_FAILED,
    STATE_PARTIAL,
    CollectorError,
    ContainerLog,
    EngineMetrics,
    Histogram,
    KubernetesData,
    RayCluster,
    Snapshot,
    VllmEndpoint,
    VllmMetrics,
    iter_bundle_text,
)
from llmsched.snapshot import bundle as bundle_module

names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
    min_size=1,
    max_size=20,
)
texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=200) | st.just("50%\r100%\r\n")
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    logs = [
        ContainerLog(draw(names), draw(names), draw(names), draw(st.booleans()), draw(texts))
        for _ in range(draw(st.integers(0, 3)))
    ]
    k8s = KubernetesData(
        context=draw(st.none() | names),
        namespaces=draw(st.none() | st.lists(names, max_size=2)),
        state=STATE_PARTIAL,
        parts={"pods": PART_OK, "nodes": PART_ERROR},
        errors=[CollectorError("kubernetes", "nodes", draw(texts))],
        lists={"pods": {"kind": "PodList", "items": [{"metadata": {"name": draw(names)}}]}},
        logs=logs,
    )
    engine = EngineMetrics(
        model_name=draw(st.none() | names),
        gauges=draw(st.dictionaries(names, floats, max_size=3)),
        rates=draw(st.dictionaries(names, floats, max_size=3)),
        histograms={"ttft": Histogram({"0.5": 1.0, "+Inf": 2.0}, 2.0, draw(floats))},
        cache_config={"block_size": "16"},
    )
    endpoints = [
        VllmEndpoint(
            name=draw(names),
            url="http://10.0.0.5:8000",
            state="ok",
            parts={"metrics": PART_OK},
            scrapes=draw(st.lists(texts, max_size=2)),
            version=draw(st.none() | st.just({"version": "0.11.0"})),
            metrics=VllmMetrics("v1", draw(st.none() | floats), {"0": engine}),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    rays = [
        RayCluster(name=draw(names), address="http://h:8265", endpoints={"version": {"v": 1}})
        for _ in range(draw(st.integers(0, 2)))
    ]
    return Snapshot(
        collected_at="2026-11-29T10:00:00Z",
        request={"namespaces": ["llm"]},
        kubernetes=draw(st.none() | st.just(k8s)),
        ray=rays,
        vllm=endpoints,
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(snapshot=snapshots())
def test_any_snapshot_survives_dict_dir_and_tarball(tmp_path: Path, snapshot: Snapshot) -> None:
    # names with slashes, dots, unicode or that collide once made safe still round-trip
    assert Snapshot.from_dict(json.loads(json.dumps(snapshot.to_dict()))) == snapshot
    for index, out in enumerate((tmp_path / "d", tmp_path / "b.tgz")):
        target = out.with_name(f"{out.stem}-{id(snapshot)}-{index}{out.suffix}")
        snapshot.save(target)
        assert Snapshot.load(target) == snapshot
        assert all(".." not in Path(rel).parts for rel, _ in iter_bundle_text(target))


def test_layout_is_readable_files(tmp_path: Path) -> None:
    snapshot = Snapshot(
        collected_at="2026-11-29T10:00:00Z",
        kubernetes=KubernetesData(
            state="ok",
            parts={"pods": PART_OK},
            lists={"pods": {"kind": "PodList", "items": []}},
            logs=[ContainerLog("llm", "vllm-0", "vllm", True, "OOMKilled\r\n")],
        ),
        vllm=[VllmEndpoint("10.0.0.5_8000", "http://10.0.0.5:8000", scrapes=["a 1\n", "a 2\n"])],
    )
    snapshot.save(tmp_path / "b")
    files = {rel for rel, _ in iter_bundle_text(tmp_path / "b")}
    assert files == {
        "manifest.json",
        "k8s/pods.json",
        "k8s/logs/llm/vllm-0/vllm.previous.log",
        "vllm/10.0.0.5_8000/metrics-0.prom",
        "vllm/10.0.0.5_8000/metrics-1.prom",
    }
    log = tmp_path / "b/k8s/logs/llm/vllm-0/vllm.previous.log"
    assert log.read_bytes() == b"OOMKilled\r\n"  # bytes as collected
    assert Snapshot.load(tmp_path / "b") == snapshot
    snapshot.save(tmp_path / "b.tar.gz")
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        assert "b/manifest.json" in tar.getnames()  # one top folder, like any release tarball


def test_nothing_collected_is_not_any_collected() -> None:
    snapshot = Snapshot(
        collected_at="x",
        vllm=[VllmEndpoint("a", "http://a", state=STATE_FAILED, parts={"metrics": PART_ERROR})],
    )
    assert not snapshot.any_collected
    assert [s.state for s in snapshot.sources()] == [STATE_FAILED]


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return path


def test_unreadable_bundles_are_input_errors(tmp_path: Path) -> None:
    manifest = Snapshot(collected_at="x").to_dict()
    cases = {
        "missing": tmp_path / "nope.tgz",
        "not-gzip": tmp_path / "junk.tgz",
        "no-manifest": _tarball(tmp_path / "empty.tgz", {"b/other.json": b"{}"}),
        "bad-json": _tarball(tmp_path / "bad.tgz", {"manifest.json": b'{"schema_'}),
        "future-schema": _tarball(
            tmp_path / "future.tgz",
            {"manifest.json": json.dumps({**manifest, "schema_version": 99}).encode()},
        ),
        "escaping-file": _tarball(
            tmp_path / "escape.tgz",
            {
                "manifest.json": json.dumps(
                    {**manifest, "kubernetes": {"lists": {"pods": {"$file": "../../etc/passwd"}}}}
                ).encode()
            },
        ),
    }
    cases["not-gzip"].write_bytes(b"this is not a tarball")
    for case, path in cases.items():
        with pytest.raises(InputFileError) as raised:
            Snapshot.load(path)
        assert raised.value.location is not None and raised.value.location.path == str(path), case


BUNDLES_WRITTEN_BY_COLLECT = sorted(
    p
    for p in (Path(__file__).resolve().parents[2] / "examples" / "incidents").iterdir()
    if p.is_dir()
)


@pytest.mark.parametrize("bundle", BUNDLES_WRITTEN_BY_COLLECT, ids=lambda p: p.name)
def test_bundles_written_by_earlier_releases_load_and_save_byte_identically(
    tmp_path: Path, bundle: Path
) -> None:
    Snapshot.load(bundle).save(tmp_path / "again")
    assert dict(iter_bundle_text(tmp_path / "again")) == dict(iter_bundle_text(bundle))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"kubernetes": 5}, "kubernetes"),
        ({"ray": {"a": 1}}, "ray"),
        ({"ray": [{"name": "r"}]}, "ray[0].address"),
        ({"vllm": [{"name": "v", "url": "u", "parts": [1]}]}, "vllm[0].parts"),
        (
            {"kubernetes": {"logs": [{"namespace": "n", "pod": "p"}]}},
            "kubernetes.logs[0].container",
        ),
        ({"kubernetes": {"lists": {"pods": [1]}}}, "kubernetes.lists.pods"),
        ({"errors": [None]}, "errors[0]"),
        ({"request": "flags"}, "request"),
    ],
)
def test_malformed_manifests_are_one_error_naming_the_field(
    tmp_path: Path, change: dict, named: str
) -> None:
    manifest = {**Snapshot(collected_at="x").to_dict(), **change}
    path = _tarball(tmp_path / "odd.tgz", {"manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(InputFileError) as raised:
        Snapshot.load(path)
    assert named in str(raised.value)


@pytest.mark.parametrize("manifest", [b"null", b"[]", b"5"])
def test_a_manifest_that_is_not_an_object_is_an_input_error(
    tmp_path: Path, manifest: bytes
) -> None:
    path = _tarball(tmp_path / "odd.tgz", {"manifest.json": manifest})
    with pytest.raises(InputFileError):
        Snapshot.load(path)


def _saved_dir(tmp_path: Path) -> Path:
    snapshot = Snapshot(
        collected_at="x",
        kubernetes=KubernetesData(
            state=PART_OK, parts={"pods": PART_OK}, logs=[ContainerLog("ns", "p", "c", False, "ok")]
        ),
    )
    return snapshot.save(tmp_path / "b")


def test_a_bundle_log_that_links_to_a_device_is_refused_not_read(tmp_path: Path) -> None:
    bundle = _saved_dir(tmp_path)
    log = bundle / "k8s/logs/ns/p/c.log"
    log.unlink()
    log.symlink_to("/dev/zero")
    with pytest.raises(InputFileError, match=r"not a regular file|outside the bundle"):
        Snapshot.load(bundle)


def test_a_fifo_in_a_bundle_is_refused_without_waiting(tmp_path: Path) -> None:
    bundle = _saved_dir(tmp_path)
    log = bundle / "k8s/logs/ns/p/c.log"
    log.unlink()
    os.mkfifo(log)
    with pytest.raises(InputFileError, match="not a regular file"):
        Snapshot.load(bundle)


def test_a_bundle_file_linking_outside_the_bundle_is_refused(tmp_path: Path) -> None:
    bundle = _saved_dir(tmp_path)
    outside = tmp_path / "elsewhere.log"
    outside.write_text("secret", encoding="utf-8")
    log = bundle / "k8s/logs/ns/p/c.log"
    log.unlink()
    log.symlink_to(outside)
    with pytest.raises(InputFileError, match="outside the bundle"):
        Snapshot.load(bundle)


def test_a_tarball_that_unpacks_past_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundle_module, "MAX_BUNDLE_BYTES", 1 << 20)
    monkeypatch.setattr(bundle_module, "MAX_MEMBER_BYTES", 1 << 20)
    manifest = json.dumps(Snapshot(collected_at="x").to_dict()).encode()
    path = _tarball(
        tmp_path / "zeros.tgz", {"b/manifest.json": manifest, "b/zeros": bytes(2 << 20)}
    )
    assert path.stat().st_size < 64 * 1024  # a small download that would unpack to 2 MiB
    with pytest.raises(InputFileError, match="unpack past"):
        Snapshot.load(path)


def test_a_truncated_tarball_is_an_input_error(tmp_path: Path) -> None:
    whole = Snapshot(collected_at="x", request={"pad": "y" * 50_000}).save(tmp_path / "whole.tgz")
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(InputFileError, match="not a readable llmsched bundle"):
        Snapshot.load(cut)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    engine = EngineMetrics(
        counters={"prompt_tokens_total": float("inf")}, rates={"x": float("nan")}
    )
    endpoint = VllmEndpoint("v", "http://v", metrics=VllmMetrics("v1", 1.0, {"0": engine}))
    bundle = Snapshot(collected_at="x", vllm=[endpoint]).save(tmp_path / "b")
    text = (bundle / "vllm/v/metrics.json").read_text(encoding="utf-8")
    assert "Infinity" not in text and "NaN" not in text
    loaded = Snapshot.load(bundle).vllm[0].metrics
    assert loaded is not None
    assert (
        loaded.engines["0"].counters == {}
        or loaded.engines["0"].counters["prompt_tokens_total"] is None
    )
