"""The registry of model types (backends), as lm-evaluation-harness registers its model classes.

A backend is chosen by name (`twinlab run-model --backend NAME`, `backend:` in a sweep file's model
entry) and the model by `--model`, which each backend reads its own way:

    transformers (default)  the bundled default, a .gguf file (de-quantised and cached), a saved
                            transformers folder, or a Hugging Face id in the local cache
    llamacpp                the bundled default's GGUF, a .gguf file, or a folder holding one .gguf;
                            runs it quantised through llama-cpp-python
    openai                  a model served by an OpenAI-compatible server (the served
                            backend)
    seq2seq                 an encoder-decoder model (Flan-T5, T5) from a local folder or the local
                            Hugging Face cache; a continuation is scored by the decoder given the encoder's input

The table below names the module of each backend, so that importing the registry (the CLI, the
runner, a sweep) imports none of them; a backend's module is imported the first time it is asked
for, and registers its class with `@register_backend(name)` when it is imported. The contract
(`Backend`, `Stream`, `ModelLoadError`) lives in `model_subjects.backends.base`, which imports no
implementation: dependencies point one way, implementations -> contract.

Every backend class provides `load(model, **settings)`. The settings every runner passes are
`COMMON_SETTINGS` (dtype, device, add_bos, batch_size, threads); a backend refuses a value it cannot
honour with a `ModelLoadError` that names the setting. Backend-specific settings (a server's URL,
llama.cpp's context size) are passed by name as well (`RunConfig.backend_options`, a sweep entry's
`options:` mapping).
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, TypeVar

from model_subjects.backends.base import Backend, ModelLoadError

DEFAULT_BACKEND = "transformers"
# backend name -> module that defines (and registers) it; nothing is imported until a name is used
BACKEND_MODULES: dict[str, str] = {
    "transformers": "model_subjects.backends.hf",
    "llamacpp": "model_subjects.backends.llamacpp",
    "openai": "model_subjects.backends.openai",
    "seq2seq": "model_subjects.backends.seq2seq",
}
ALIASES = {"hf": "transformers", "huggingface": "transformers", "llama.cpp": "llamacpp", "llama-cpp": "llamacpp",
           "gguf": "llamacpp", "openai-compatible": "openai", "server": "openai",
           "t5": "seq2seq", "flan-t5": "seq2seq", "encoder-decoder": "seq2seq"}
COMMON_SETTINGS = ("dtype", "device", "add_bos", "batch_size", "threads")

# settings that have an option of their own on `run-model` (and a field in a sweep's model entry):
# never a backend option (`-B model=...` would reach `load` twice)
OWN_OPTIONS = {"model": "--model", "backend": "--backend", "dtype": "--dtype", "device": "--device",
               "add_bos": "--add-bos/--no-add-bos", "batch_size": "--batch-size", "threads": "--threads"}

_REGISTRY: dict[str, type[Backend]] = {}
B = TypeVar("B", bound=type[Backend])


def register_backend(name: str) -> Callable[[B], B]:
    """Class decorator: make a Backend subclass loadable by `name` (sets `cls.backend_name`)."""

    def deco(cls: B) -> B:
        if not (isinstance(cls, type) and issubclass(cls, Backend)):
            raise TypeError(f"@register_backend({name!r}) decorates a Backend subclass, not {cls!r}")
        if not callable(getattr(cls, "load", None)):
            raise TypeError(f"backend {name!r} ({cls.__name__}) needs a classmethod load(model, **settings)")
        old = _REGISTRY.get(name)
        if old is not None and old is not cls and old.__qualname__ != cls.__qualname__:
            raise ValueError(f"backend name {name!r} is taken by {old.__module__}.{old.__qualname__}")
        cls.backend_name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def backend_names() -> list[str]:
    """Names a user can pass to --backend (the lazy table and anything registered at run time)."""
    return sorted(set(BACKEND_MODULES) | set(_REGISTRY))


def canonical_name(name: str | None) -> str:
    """The registered name for `name` (None/"" -> the default); raises ModelLoadError for an unknown one."""
    key = (name or DEFAULT_BACKEND).strip().lower()
    key = ALIASES.get(key, key)
    if key not in BACKEND_MODULES and key not in _REGISTRY:
        raise ModelLoadError(f"unknown backend {name!r}; known: {', '.join(backend_names())}")
    return key


def get_backend_class(name: str | None = None) -> type[Backend]:
    """The class registered as `name`, importing its module on first use."""
    key = canonical_name(name)
    if key not in _REGISTRY:
        module = BACKEND_MODULES[key]
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                raise ModelLoadError(f"backend {key!r} is not available in this installation "
                                     f"(its module {module} is missing)") from None
            raise ModelLoadError(f"backend {key!r} needs the Python package {exc.name!r}, which is not installed "
                                 "(scripts/setup.sh installs it; see requirements.lock)") from None
        if key not in _REGISTRY:
            raise ModelLoadError(f"module {module} did not register a backend named {key!r}")
    return _REGISTRY[key]


def load_backend(model: str | None = None, backend: str | None = None, **settings: Any) -> Backend:
    """Load `model` with the backend named `backend` (default: transformers); settings by name.

    A setting the backend does not have is refused with a ModelLoadError naming it (not a TypeError).
    """
    cls = get_backend_class(backend)
    params = inspect.signature(cls.load).parameters  # type: ignore[attr-defined]
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(settings) - set(params))
        if unknown:
            raise ModelLoadError(f"backend {cls.backend_name!r} has no setting {', '.join(map(repr, unknown))}; "
                                 f"its settings: {', '.join(p for p in params if p not in ('model', 'cls'))}")
    return cls.load(model, **settings)  # type: ignore[attr-defined]
