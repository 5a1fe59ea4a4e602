"""Model subjects: language models run through the same compiled trials, context and feedback as humans.

Public API (importing this package does not import torch):
    load_backend(model=None, backend="transformers"|"llamacpp"|..., dtype=, device=, add_bos=, batch_size=,
                 threads=)  -> Backend        (model_subjects.backends.registry: backends by name, loaded lazily)
    Backend.loglikelihood([LoglikelihoodRequest]) / .generate_until([GenerationRequest]) / .stream()
    get_protocol(name), protocol_names(kind)                  response protocols
    parse_context(text, subject_index), rebuild_contexts(...)  context modes and recovery
    RunConfig, Runner, run_models(cfg)                         sessions through SessionWriter
    RunConfig(learning="weights"|"both", lr=, steps=, update_on=, ...)  weights that learn (model_subjects/weights.py)
CLI: `twinlab run-model` (model_subjects.cli.run_model). See docs/model_subjects.md.
"""
from model_subjects.backends.base import Backend, ModelLoadError, Stream
from model_subjects.backends.registry import backend_names, load_backend, register_backend
from model_subjects.context import parse_context, rebuild_contexts
from model_subjects.protocols import get_protocol
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult
from model_subjects.runner import RunConfig, Runner, run_models
from model_subjects.tasks.registry import protocol_names

__all__ = [
    "Backend", "ModelLoadError", "Stream", "load_backend", "backend_names", "register_backend", "parse_context",
    "rebuild_contexts", "protocol_names",
    "get_protocol", "GenerationRequest", "LoglikelihoodRequest", "LoglikelihoodResult", "RunConfig", "Runner",
    "run_models",
]

# this package's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "run-model", "module": "cli", "function": "run_model",
     "help": "Run language-model subjects through the spec's trials (same sequences, context and feedback as humans)."},
    {"group": "", "name": "people-jsonl", "module": "cli", "function": "people_jsonl",
     "help": "Write each person's session as one Psych-201-style JSONL line of the transcript a model would read."},
    {"group": "", "name": "sweep", "module": "sweep", "function": "sweep_command",
     "help": "Run a sweep of model subjects; finished sessions are skipped, unfinished ones continue."},
    {"group": "", "name": "context", "module": "cli", "function": "context",
     "help": "Print the exact text a model read before answering trial N of a session."},
)
