"""The model-only toy kind's `analysis` part: its report section."""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind, SectionArgs

NAME = "colour_toy_b"


def toy_section(a: SectionArgs) -> None:
    """How often each group answered 'colour', per item answer."""
    d = a.rows[a.rows["task"] == NAME]
    t = (d.assign(said_colour=(d["response"] == "colour").astype(int))
         .groupby(["group", "correct_response"], sort=True)["said_colour"].agg(["size", "sum"]).reset_index()
         .rename(columns={"size": "n_trials", "sum": "n_colour"}))
    a.res.section(f"task_{NAME}", "Colour toy: answers", "Trials answered 'colour', by the item's answer.",
                  [a.res.table("toy_answers", t, "Answers")])


ANALYSIS = AnalysisKind(NAME, section=toy_section)
