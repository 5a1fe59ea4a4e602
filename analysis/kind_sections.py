"""What each task kind registers on the analysis side: its report section and the measures it takes part in.

The analysis reads trial tables, never a runner; a kind's analysis side is its folder's `analysis` part
(kinds/<kind>/analysis.py: `ANALYSIS`, an AnalysisKind), found through the one registry of kinds
(experiments/kinds.py), keyed by the kind's name (the `task` column). The report, acceptance and d′, the
response-time section, the twins' likelihoods and the demand gap look a kind up here and never branch on
its name. A kind from outside (a test's toy kind, a third party's package) gets its section in the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from experiments.kinds import parts

if TYPE_CHECKING:  # the registry stays light: the kinds' analysis parts import it
    import pandas as pd


@dataclass(frozen=True)
class SectionArgs:
    """What a kind's report section gets: the results folder, the rows of --blocks, the design's factors,
    the cells (--by), the options, the output folder, the log and the list of skipped analyses."""

    res: Any
    rows: pd.DataFrame
    factors: dict
    by: list[str]
    opt: Any
    out: Path
    log: Callable[[str], None]
    skipped: list[str]


@dataclass(frozen=True)
class KindTable:
    """A kind's own table in a shared section: its file name, its title, its rows and the sentence saying
    what it is (shown only when it has rows)."""

    name: str
    title: str
    table: pd.DataFrame
    text: str


@dataclass(frozen=True)
class AnalysisKind:
    """One task kind on the analysis side.

    `detection`: the kind answers with an accepting and a rejecting label (experiments.tasks.detection_values),
    so acceptance, hits, false alarms and d′ apply; `rt`: people's response times are analysed (correct
    trials, named trimming rules); `typed`: answers are typed words (a twin's likelihood is log P(the word),
    no option set); `section(args)`: the kind's own report section, shown when its rows are present;
    `methods`: the start of a recorded protocol name -> its evaluation method, for names the generic rule
    ('meta', 'direct', 'production' in the name) does not place; `families`: a name's head (before the first
    ':') -> its task family (protocols posing the same task at different demands; 'production' also names
    the family of every production head); `low_demand`: protocols preferred as the low-demand partner of
    the demand gap; `value_options`: recorded
    protocols whose two options are (sentence, pair) read as the kind's (accepting, rejecting) values;
    `untyped_tables`: a table without a `task` column (a Lakretz release) is this kind; `word_by_word`: rows
    are read word by word (per-word RTs beside the models' surprisal: the reading ΔLL of the twins);
    `closing_section(args)`: sections after the shared measures', on all rows; `logprob_table(rows)`: the
    kind's own table from the `direct` protocols' log-probabilities (the rows of their section), shown in that
    section when it has rows (lexical decision's decision without a rule: AUC and d′ at a stated criterion);
    `api`: functions `analysis.api` offers under these names (`choice_bias`, ...), each given the design's
    frame (and the api's checked arguments), so the API reaches the kind through what it declares.
    """

    name: str
    detection: bool = False
    rt: bool = False
    typed: bool = False
    section: Callable[[SectionArgs], None] | None = None
    methods: Mapping[str, str] = field(default_factory=dict)
    families: Mapping[str, str] = field(default_factory=dict)
    low_demand: tuple[str, ...] = ()
    value_options: tuple[str, ...] = ()
    untyped_tables: bool = False
    word_by_word: bool = False
    # sections shown after the shared measures' (log-probabilities, response times), on every row of the
    # table (`args.rows`: all blocks; the kind says itself whether it applies): self-paced reading's
    closing_section: Callable[[SectionArgs], None] | None = None
    logprob_table: Callable[[pd.DataFrame], KindTable] | None = None
    api: Mapping[str, Callable[..., Any]] = field(default_factory=dict)


def analysis_kinds() -> dict[str, AnalysisKind]:
    """Every kind's AnalysisKind (its folder's `analysis` part, `ANALYSIS`), in listing order (the report's
    section order; experiments/kinds.py)."""

    return parts("analysis", "ANALYSIS")  # type: ignore[return-value]


def kinds_where(flag: str) -> tuple[str, ...]:
    """The kinds whose `flag` (detection, rt, typed) is set, in registration order."""
    return tuple(name for name, k in analysis_kinds().items() if getattr(k, flag))


def untyped_kind() -> str | None:
    """The kind of a table without a `task` column (None: no kind claims such tables)."""
    return next((name for name, k in analysis_kinds().items() if k.untyped_tables), None)


def protocol_method(protocol: str) -> str | None:
    """The evaluation method a kind registered for a recorded protocol name (lower case; matched at its start)."""
    for k in analysis_kinds().values():
        for start, method in k.methods.items():
            if protocol.startswith(start):
                return method
    return None


def protocol_family(head: str) -> str | None:
    """The task family a kind registered for a protocol name's head (lower case)."""
    for k in analysis_kinds().values():
        if head in k.families:
            return k.families[head]
    return None


def low_demand_protocols() -> tuple[str, ...]:
    return tuple(p for k in analysis_kinds().values() for p in k.low_demand)


def value_option_protocols() -> set[str]:
    return {p for k in analysis_kinds().values() for p in k.value_options}


def logprob_tables(rows: pd.DataFrame) -> list[KindTable]:
    """The kinds' own tables from log-probability rows (each kind's `logprob_table`), those with rows, in listing
    order."""
    made = [k.logprob_table(rows) for k in analysis_kinds().values() if k.logprob_table is not None]
    return [t for t in made if len(t.table)]


def kind_function(name: str) -> Callable[..., Any]:
    """The function a kind declares for `analysis.api` under `name` (its `api`); LookupError when no installed
    kind declares it."""
    for k in analysis_kinds().values():
        if name in k.api:
            return k.api[name]
    raise LookupError(f"{name}: no installed task kind declares it (AnalysisKind.api)")


def kind_sections(args: SectionArgs, present: set[str]) -> None:
    """Each present kind's own section, in registration order."""
    for name, k in analysis_kinds().items():
        if name in present and k.section is not None:
            k.section(args)


def kind_closing_sections(args: SectionArgs) -> None:
    """Each kind's closing sections (after the shared measures'), in listing order."""
    for k in analysis_kinds().values():
        if k.closing_section is not None:
            k.closing_section(args)
