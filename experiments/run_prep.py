"""One way to prepare a run: load the spec, check its sizes, check the chosen list.

`run-human`, `run-model`, `web` and `sweep` all start here, so a spec or a --list that one runner
refuses every runner refuses with the same message, before any model loads or window opens.
"""
from __future__ import annotations

from experiments.spec import Experiment, load_spec


def checked_spec(spec: str | Experiment, list_number: int | None = None, list_name: str = "--list") -> Experiment:
    """The experiment of `spec` (a path, a bundled name or a loaded one) whose block sizes the design and
    the pool can supply and whose `list_number` (None: the id rotation) is one of its lists.

    Raises SpecError (the spec) or OptionError (the list), each naming what is wrong."""
    from experiments.compiler import check_sizes
    from experiments.lists import check_list

    exp = spec if isinstance(spec, Experiment) else load_spec(spec)
    check_sizes(exp)
    check_list(exp, list_number, list_name)
    return exp
