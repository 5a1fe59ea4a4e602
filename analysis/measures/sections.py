"""Report sections for the measures of analysis/measures/task_measures.py: the `direct` protocols' log-probabilities
(with the kinds' own tables from them: lexical decision's AUC and d' at a stated criterion) and response times of
the RT tasks."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from analysis.kind_sections import logprob_tables
from analysis.measures.task_measures import logprob_means, logprob_rows, rt_means, rt_rows, rt_rule
from analysis.report.results_folder import Results

if TYPE_CHECKING:
    from analysis.options import Options


def logprob_section(res: Results, t: pd.DataFrame, by: list[str], opt: Options) -> None:
    """Per condition: mean log P of the sentence (per character; SLOR where the items give a unigram
    log-probability) for each model group that recorded one; then the kinds' own tables from them (lexical
    decision: AUC and d' at the median)."""
    d = logprob_rows(t)
    if d.empty:
        return
    by = [b for b in by if b in d.columns]
    means = logprob_means(d, by, opt.seed, opt.n_boot)
    own = logprob_tables(d)
    slor = "slor" in d.columns
    res.section("model_logprob", "Models: log-probabilities (the direct measure)",
                "Where a protocol records the sentence's log-probability (`sentence_logprob`: the `direct` protocols) "
                "it is the model's measure, analysed per cell of the design: the mean log P(sentence) and per character"
                + (", and SLOR = (log P - log P_unigram) / words from the items' `unigram_logprob`" if slor else
                   " (no `unigram_logprob` column: no SLOR)")
                + "; 95% bootstrap CIs resampling items. " + " ".join(t.text for t in own),
                [res.table("model_logprob", means, "Log-probability by condition")]
                + [res.table(t.name, t.table, t.title) for t in own])


def rt_section(res: Results, t: pd.DataFrame, by: list[str], opt: Options) -> None:
    """People's response times of lexical decision, judgment and choice: correct trials, named exclusions
    with their counts, geometric means per cell with CIs over subjects."""
    kept, excl = rt_rows(t, opt.rt_trim, opt.rt_sd)
    if excl.empty:
        return
    by = [b for b in by if b in kept.columns]
    means = rt_means(kept, by, opt.seed, opt.n_boot) if len(kept) else pd.DataFrame()
    res.section("response_times", "Response times (people)",
                rt_rule(opt.rt_trim, opt.rt_sd) + ". The exclusions table counts what each rule removed, in that "
                "order, per group and task; the means are over subjects' mean log RT with 95% bootstrap CIs "
                "resampling subjects. A formula on RTs: `--formula \"rt_ms ~ ...\"` fits log RT on every answered "
                "trial (errors included, no trimming) unless you subset the data yourself.",
                [res.table("rt_exclusions", excl, "RT exclusions"),
                 res.table("rt_means", means, "Response time by condition (ms, geometric "
                                              "mean)") if len(means) else None])
