"""The `analyze` options a study declares beside its report plans (`ANALYSIS_OPTIONS`, `FOCUS_FORM` in its
`__init__`): the command shows them under the study's heading of `--help` and passes them to analysis.api by
the keyword each names (analysis/options.py: check_options checks their values). The core's `analyze` names
none of them.

Light on purpose (typer and the studies' light `__init__` only): `twinlab --help` builds the command.
"""
from __future__ import annotations

import copy
import functools
import inspect
from typing import Any, Callable, List

import typer

from experiments.studies import declared

TYPES: dict[str, Any] = {"text": str, "list": List[str], "flag": bool}


def declared_options() -> list[tuple[str, dict[str, Any]]]:
    """(heading, declaration) of every option the registered studies declare, in the studies' listing order."""
    titles = declared("TITLE")
    return [(f"{titles.get(name, name)}", dict(opt)) for name, opts in declared("ANALYSIS_OPTIONS").items()
            for opt in opts]


def focus_forms() -> str:
    """The studies' own forms of `--focus`, for its help ("" when no study declares one)."""
    return "; ".join(str(v) for v in declared("FOCUS_FORM").values())


def with_study_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`command` (whose last parameter is `study_options: dict`) with one typer option per declared option,
    under its study's heading; the values reach `command` as `study_options` = {api keyword: value}."""
    declared_opts = declared_options()
    sig = inspect.signature(command, eval_str=True)
    params = [p for p in sig.parameters.values() if p.name != "study_options"]
    forms = focus_forms()
    for i, p in enumerate(params):  # `--focus`: the studies' own forms of it, named where its help is
        if p.name == "focus" and forms:
            option = copy.copy(p.default)
            option.help = f"{option.help}. A study's form: {forms}"
            params[i] = p.replace(default=option)
    taken = {p.name for p in params}
    extra = []
    for heading, opt in declared_opts:
        if opt["name"] in taken:
            raise ValueError(f"study option {opt['flag']}: `analyze` already has a parameter {opt['name']!r}")
        default = list(opt["default"]) if opt["type"] == "list" else opt["default"]
        extra.append(inspect.Parameter(opt["name"], inspect.Parameter.KEYWORD_ONLY, annotation=TYPES[opt["type"]],
                                       default=typer.Option(default, opt["flag"], help=opt["help"],
                                                            rich_help_panel=heading)))
        taken.add(opt["name"])

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        values = {opt["api"]: given.pop(opt["name"]) for _, opt in declared_opts}
        return command(**given, study_options=values)

    run.__signature__ = sig.replace(parameters=params + extra)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params + extra}
    del run.__wrapped__  # (typer reads the signature above, not the wrapped function's)
    return run
