"""The analysis reaches a kind through what it declares (no analysis file names a kind): the API's
per-kind functions are the kinds' `AnalysisKind.api`, the log-probability section's own tables their
`logprob_table`, the adaptation effect's reading kinds their `word_by_word`."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis.kind_sections import analysis_kinds, kind_function, logprob_tables


def test_each_per_kind_api_function_is_declared_by_one_kind():
    declared = [(name, k.name) for k in analysis_kinds().values() for name in k.api]
    assert sorted(declared) == [("choice_bias", "choice"), ("completion", "completion"),
                                ("rating_distribution", "rating")]
    assert kind_function("choice_bias") is analysis_kinds()["choice"].api["choice_bias"]
    with pytest.raises(LookupError, match="no_such_function: no installed task kind declares it"):
        kind_function("no_such_function")


def test_the_log_probability_section_gets_lexical_decisions_table_only_where_it_has_rows():
    # words -1 and -2, non-words -3 and -1.5: a word above a non-word in 3 of the 4 pairs (AUC 0.75, by hand)
    d = pd.DataFrame({"task": "lexical_decision", "group": "m", "signal": [False, False, True, True],
                      "logprob_per_char": [-1.0, -2.0, -3.0, -1.5]})
    (t,) = logprob_tables(d)
    assert t.name == "lexical_logprob_decision" and "criterion" in t.text
    assert t.table["auc"].tolist() == [0.75] and t.table["words"].tolist() == [2]
    assert logprob_tables(d.assign(task="judgment")) == []  # no lexical decision rows: no table, no sentence


def test_the_adaptation_effect_reads_the_kinds_read_word_by_word():
    from analysis.adaptation import AdaptationError, check_rows, reading_kinds

    assert reading_kinds() == tuple(n for n, k in analysis_kinds().items() if k.word_by_word) == ("self_paced_reading",)
    rows = pd.DataFrame({"group": ["m"], "subject_kind": ["model"], "task": ["judgment"], "model": ["x"],
                         "protocol": ["surprisal"], "context_mode": ["none+weights:read"]})
    with pytest.raises(AdaptationError, match=r"no reading task \(task self_paced_reading: .*their tasks: judgment"):
        check_rows(rows)
