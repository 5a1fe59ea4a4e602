"""The converted-model cache is trusted on content (SHA-256 recorded at conversion), not on file size."""
from __future__ import annotations

import json
import shutil

import pytest

from model_subjects import loading
from model_subjects.loading import DEFAULT_MODEL, MARKER, STAMPS, cache_root, resolve_model


class Reconverted(Exception):
    pass


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A copy of the real converted default model in a private cache (converted first if needed)."""
    src = cache_root() / "models" / DEFAULT_MODEL
    if not (src / MARKER).exists():
        resolve_model(None)  # converts once, as the first model test would
    dst = tmp_path / "models" / DEFAULT_MODEL
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(STAMPS))
    monkeypatch.setenv("TWINLAB_CACHE", str(tmp_path))
    return dst


def _count_hashes(monkeypatch) -> list:
    calls = []
    real = loading.sha256_file
    monkeypatch.setattr(loading, "sha256_file", lambda p, *a: calls.append(p.name) or real(p, *a))
    return calls


def _refuse_conversion(monkeypatch) -> None:
    def convert(gguf, target):
        raise Reconverted(str(target))
    monkeypatch.setattr(loading, "convert_gguf", convert)


def test_an_intact_cache_is_hashed_once_then_trusted_by_its_file_state(cache, monkeypatch):
    _refuse_conversion(monkeypatch)
    calls = _count_hashes(monkeypatch)
    assert resolve_model(None).path == str(cache)
    assert sorted(calls) == sorted(["model.safetensors", loading.bundled_gguf().name])  # copied: new inodes
    calls.clear()
    resolve_model(None)
    assert calls == []  # unchanged files: not hashed again


def test_a_changed_weights_file_of_the_same_size_is_converted_again(cache, monkeypatch, capsys):
    weights = cache / "model.safetensors"
    resolve_model(None)  # stamps written
    size = weights.stat().st_size
    with open(weights, "r+b") as fh:  # one byte in the middle, the size unchanged
        fh.seek(size // 2)
        b = fh.read(1)
        fh.seek(size // 2)
        fh.write(bytes([b[0] ^ 0xFF]))
    assert weights.stat().st_size == size
    _refuse_conversion(monkeypatch)
    with pytest.raises(Reconverted, match=str(cache)):
        resolve_model(None)
    err = capsys.readouterr().err
    assert "failed its check" in err and "model.safetensors has SHA-256" in err


def test_a_cache_without_recorded_hashes_is_converted_again(cache, monkeypatch):
    meta = json.loads((cache / MARKER).read_text())
    meta.pop("weights_sha256")
    (cache / MARKER).write_text(json.dumps(meta))
    _refuse_conversion(monkeypatch)
    with pytest.raises(Reconverted):
        resolve_model(None)
