"""Checks of a run's protocol and context that `run-model` and `sweep` share, made before a model loads.

Its own module so that the command module (`cli`) and the sweep both import it, not each other.
"""
from __future__ import annotations


def protocol_and_context(cfg, exp) -> None:
    """--protocol, --question and --context for every subject; OptionError naming the problem."""
    from experiments.options import OptionError
    from model_subjects.context import ContextError, parse_context
    from model_subjects.protocols import ProtocolError, default_protocol, get_protocol

    from experiments.tasks import TaskError, check_runner

    try:
        check_runner(exp.task.kind, "model")
        get_protocol(cfg.protocol or default_protocol(exp.task.kind), question=cfg.question,
                     max_new_tokens=cfg.max_new_tokens, task=exp.task)
        for k in range(cfg.subjects):
            parse_context(cfg.context, k + cfg.first_subject - 1)
    except (ProtocolError, ContextError, TaskError) as exc:
        raise OptionError(str(exc)) from None
