"""The registry of model types: backends by name, loaded lazily, no import circle (no model needed)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

from model_subjects.backends.base import Backend, ModelLoadError
from model_subjects.backends.registry import (
    BACKEND_MODULES,
    backend_names,
    canonical_name,
    get_backend_class,
    load_backend,
    register_backend,
)
from model_subjects.requests import LoglikelihoodResult
from model_subjects.sweep import SweepError, cells, load_sweep, run_config

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "model_subjects"


def _imports(path: Path) -> set[str]:
    """Every model_subjects module `path` imports (dotted, below model_subjects), at the top or inside functions
    (TYPE_CHECKING included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("model_subjects."):
            out.add(node.module.removeprefix("model_subjects."))
        elif isinstance(node, ast.Import):
            out |= {a.name.removeprefix("model_subjects.") for a in node.names if a.name.startswith("model_subjects.")}
    return out


def _module(p: Path) -> str:
    return ".".join(p.relative_to(PKG).with_suffix("").parts).removesuffix(".__init__")


def test_backend_contract_imports_no_implementation_and_there_is_no_circle():
    graph = {_module(p): _imports(p) for p in PKG.rglob("*.py") if p.name != "__init__.py"}
    assert {"backends.base", "backends.hf", "backends.llamacpp", "backends.registry"} <= set(graph)
    assert graph["backends.base"] <= {"requests"}, graph["backends.base"]
    # no cycle among the modules (depth-first search for a back edge)
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in graph.get(m, ()):
            assert state.get(n) != 1, f"import circle: {' -> '.join(path + [m, n])}"
            if n not in state:
                visit(n, path + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


def test_registry_imports_nothing_heavy_until_a_backend_is_asked_for():
    code = ("import sys, model_subjects, model_subjects.backends.registry as r, model_subjects.cli, "
            "model_subjects.sweep;"
            "r.canonical_name('llamacpp'); r.backend_names();"
            "bad=[m for m in ('torch','transformers','llama_cpp','model_subjects.backends.hf',"
            "'model_subjects.backends.llamacpp') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr


def test_names_aliases_and_unknown_backends():
    assert {"transformers", "llamacpp", "openai"} <= set(backend_names())
    assert canonical_name(None) == "transformers"
    assert canonical_name("HF") == "transformers"
    assert canonical_name("llama.cpp") == "llamacpp"
    with pytest.raises(ModelLoadError, match="unknown backend 'vllm2'; known: .*llamacpp"):
        canonical_name("vllm2")
    cls = get_backend_class("transformers")
    assert cls.__name__ == "TransformersBackend" and cls.backend_name == "transformers"
    assert set(BACKEND_MODULES.values()) >= {"model_subjects.backends.hf", "model_subjects.backends.llamacpp"}


class _Echo(Backend):
    """A registered backend that records how it was loaded (the registry's own plumbing only)."""

    def __init__(self, model: str | None, threads: int | None):
        self.name, self.threads = model or "echo", threads

    @classmethod
    def load(cls, model: str | None = None, *, threads: int | None = 1, add_bos: bool = False) -> "_Echo":
        return cls(model, threads)

    def loglikelihood(self, requests: Sequence[Any], progress: Any = None) -> list[LoglikelihoodResult]:
        return [LoglikelihoodResult(-1.0, True, 1) for _ in requests]

    def generate_until(self, requests: Sequence[Any], progress: Any = None) -> list[str]:
        return ["" for _ in requests]


def test_a_registered_backend_loads_by_name_and_unknown_settings_are_refused():
    register_backend("test-echo")(_Echo)
    b = load_backend("x", backend="test-echo", threads=3)
    assert isinstance(b, _Echo) and (b.name, b.threads) == ("x", 3) and b.backend_name == "test-echo"
    assert "test-echo" in backend_names()
    with pytest.raises(ModelLoadError, match="backend 'test-echo' has no setting 'n_gpu'"):
        load_backend("x", backend="test-echo", n_gpu=2)
    with pytest.raises(ValueError, match="taken"):
        register_backend("test-echo")(type("Other", (_Echo,), {}))
    with pytest.raises(TypeError):
        register_backend("not-a-backend")(object)  # type: ignore[arg-type]


def test_sweep_model_entries_name_their_backend(tmp_path):
    text = ("spec: lakretz2021_nested\nout: out\nmodels: [smollm2, {model: smollm2, backend: llamacpp, "
            "options: {n_ctx: 4096}}]\n")
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    sweep, out = load_sweep(p)
    cs = cells(sweep, out)
    assert [c.out.relative_to(out).parts[0] for c in cs] == ["smollm2", "smollm2_llamacpp"]
    cfg = run_config(sweep, cs[1])
    assert (cfg.backend, cfg.backend_options) == ("llamacpp", {"n_ctx": 4096})
    assert run_config(sweep, cs[0]).backend == "transformers"
    p.write_text(text.replace("backend: llamacpp", "backend: nonesuch"), encoding="utf-8")
    with pytest.raises(SweepError, match="field 'models.1.backend'.*unknown backend 'nonesuch'"):
        load_sweep(p)


def test_cli_unknown_backend_and_bad_option_exit_2_before_loading():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, msg in ((["--backend", "nonesuch"], "--backend: unknown backend 'nonesuch'"),
                      (["--backend", "llamacpp", "-B", "n_ctx"], "write KEY=VALUE")):
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", "lakretz2021_nested", *args],
                           capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
        assert r.returncode == 2, r.stdout + r.stderr
        assert msg in r.stderr and "Traceback" not in r.stderr, r.stderr
