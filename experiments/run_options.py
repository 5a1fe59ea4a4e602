"""Every option of a model run checked in one place (`run_options`): `run-model`, each job of a `sweep` and
`reproduce` call it before any model loads. Its own module because it uses both the option rules
(experiments/options.py) and the output-folder rules (experiments/outputs.py, which imports options)."""
from __future__ import annotations

from pathlib import Path

from experiments.options import (
    MAX_SESSION,
    at_least,
    batch_size,
    cli_name,
    device,
    dtype,
    model_path,
    subject_id,
    threads,
)
from experiments.outputs import check_dataset_folder


def run_options(cfg, name=cli_name) -> None:
    """Every option of a model run (a `RunConfig`): the one set of rules `run-model`, each job of a
    `sweep` and `reproduce` apply before any model loads. `name(field)` says how the message
    names a field (`--threads` on the command line, `models.1.threads` in a sweep file)."""
    at_least(name("subjects"), cfg.subjects, 1, 10_000)
    at_least(name("first_subject"), cfg.first_subject, 0, 1_000_000)
    subject_id(name("subject_prefix"), cfg.subject_prefix)
    at_least(name("trials"), cfg.trials, 1)
    at_least(name("session"), cfg.session, 1, MAX_SESSION)
    batch_size(cfg.batch_size, name("batch_size"))
    threads(cfg.threads, name("threads"))
    at_least(name("max_new_tokens"), cfg.max_new_tokens, 1, 4096)
    dtype(cfg.dtype, name("dtype"))
    device(cfg.device, name("device"))
    check_dataset_folder(name("out"), Path(cfg.out))
    model_path(name("model"), cfg.model)
