from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmsched import user_cache
from llmsched.engine.loader import load_rules


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("LLMSCHED_CACHE_DIR", raising=False)
    monkeypatch.delenv("LLMSCHED_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "llmsched"


def test_xdg_cache_home_is_respected_and_relative_values_ignored(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert user_cache.cache_dir() == cache_home
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache.cache_dir() == tmp_path / "home" / ".cache" / "llmsched"
    monkeypatch.setenv("LLMSCHED_NO_CACHE", "1")
    assert user_cache.cache_dir() is None


def test_a_value_is_built_once_then_read_back(cache_home: Path) -> None:
    calls: list[int] = []

    def build() -> dict[str, int]:
        calls.append(1)
        return {"a": 1}

    key = user_cache.content_key("t", [b"x"])
    assert user_cache.cached("t", key, build) == {"a": 1}
    assert user_cache.cached("t", key, build) == {"a": 1}
    assert len(calls) == 1
    assert user_cache.content_key("t", [b"y"]) != key
    assert user_cache.content_key("t", [b"x", b""]) != key  # lengths are part of the key


def test_unwritable_or_corrupt_cache_falls_back_silently(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LLMSCHED_CACHE_DIR", str(blocker / "sub"))
    assert user_cache.cached("t", "k", lambda: 5) == 5
    monkeypatch.setenv("LLMSCHED_CACHE_DIR", str(tmp_path / "c"))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "t-k.pickle").write_bytes(b"garbage")
    assert user_cache.cached("t", "k", lambda: 6) == 6
    assert user_cache.cached("t", "k", lambda: 7) == 6  # rewritten whole


def test_rules_come_from_the_cache_and_a_changed_rule_file_is_parsed_again(
    cache_home: Path, tmp_path: Path
) -> None:
    user_dir = tmp_path / "rules"
    user_dir.mkdir()
    first = load_rules([], kind="lint")
    assert any(p.name.startswith("rules-") for p in cache_home.iterdir())
    assert [s.code for s in load_rules([], kind="lint")] == [s.code for s in first]
    source = Path(first[0].path)
    (user_dir / "X.yaml").write_text(
        source.read_text().replace(f"code: {first[0].code}", "code: X901")
        .replace(f"name: {first[0].name}", "name: xtest-rule"))
    with_user = load_rules([str(user_dir)], kind="lint")
    assert "X901" in {s.code for s in with_user}
    (user_dir / "X.yaml").write_text((user_dir / "X.yaml").read_text().replace(
        "X901", "X902"))
    assert "X902" in {s.code for s in load_rules([str(user_dir)], kind="lint")}


def test_lint_writes_nothing_into_the_package_or_the_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / "m.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    package = Path(user_cache.__file__).parent
    before = sorted(p for p in package.rglob("*") if "__pycache__" not in p.parts)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("LLMSCHED_CACHE_DIR", None)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "llmsched", "checklist", "lint", "m.yaml"],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "m.yaml"]
    assert sorted(p for p in package.rglob("*") if "__pycache__" not in p.parts) == before
    assert list((tmp_path / "xdg" / "llmsched").glob("rules-*.pickle"))


def test_the_symptom_catalogue_read_back_triages_as_the_one_built(cache_home: Path) -> None:
    from llmsched.evidence.triage import CATALOGUE_PATH, load_symptoms, triage_words
    from llmsched.model import Location

    built = load_symptoms.__wrapped__(CATALOGUE_PATH)
    assert list(cache_home.glob("symptoms-*.pickle"))
    read_back = load_symptoms.__wrapped__(CATALOGUE_PATH)
    assert read_back is not built and read_back == built
    said = [(Location("notes.md", 1), "the pod is stuck in Pending, 0/4 nodes have a GPU"),
            (Location("notes.md", 2), "vLLM 启动后 OOM, TTFT is awful")]
    assert triage_words(said, read_back) == triage_words(said, built)
