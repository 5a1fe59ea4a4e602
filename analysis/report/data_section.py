"""The report's Data section: sample sizes, sessions skipped before any analysis, outliers, and the
one statement of what could not run without the trial order."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.load import LoadError
from analysis.load.prepare import scored_rows


def drop_training_only_sessions(d: pd.DataFrame, info) -> pd.DataFrame:
    """Sessions that never got past training (a set-up check such as `run-human --trials 5`) have nothing
    to score; they are skipped with a note, and the rest is analysed. None left: a LoadError."""
    keys = ["source_file", "subject_key", "session"]
    only = d.groupby(keys, dropna=False, sort=False)["training"].transform("all")
    if only.any():
        for (src, _subj, sess), g in d[only].groupby(keys, dropna=False, sort=False):
            what = f"{Path(str(src)).name} (subject {g['subject_id'].iloc[0]}, session {sess})"
            info.notes.append(f"{what}: skipped, it holds only training trials ({len(g)}); nothing is scored "
                              "before the training block ends")
            info.exclude(what, len(g), "training trials only (session ended during training)")
        d = d[~only].reset_index(drop=True)
    if d.empty:
        raise LoadError("no trials to analyse: " + info.why_empty())
    return d


def sample_sizes(d: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for g, x in d.groupby("group", sort=True):
        post = x[~x["training"]]
        known = x["order_known"]
        rows.append({
            "group": g, "subject_kind": x["subject_kind"].iloc[0], "subjects": x["subject_key"].nunique(),
            "subjects_with_trial_order": x.loc[known, "subject_key"].nunique(),
            "sessions": x.loc[known, ["subject_key", "session"]].drop_duplicates().shape[0], "trials": len(x),
            "training_trials": int(x["training"].sum()),
            "post_training_violation_trials_scored": int(scored_rows(x).shape[0]),
            "post_training_grammatical_trials": int((post["violation_position"] == "none").sum()),
            "other_or_filler_trials": int((x["violation_position"] == "other").sum()),
            "trials_without_answer": int(x["correct"].isna().sum()),
        })
    return pd.DataFrame(rows)


ORDER_ANALYSES = ("first-encounter error rates (Table C1, Figure 6a)",
                  "first encounter against trial number (Figure C1, 6b)",
                  "learning over exposures (Figure 6c, Figure C2 with its glmer slopes)",
                  "the exposure models `error ~ exposures + (1|subject)` and the extended model (Tables C2, C3)",
                  "Figures C3 and C4 (these also need training logs)")


HOW_TO_ORDER = ("`twinlab import lakretz2021 --results dataframe_results_all_trials.csv --logs LOG_FOLDER --out "
                "imported`, then `twinlab analyze imported --out REPORT`")


def order_statement(d: pd.DataFrame, info_files: list[str]) -> str | None:
    """The one paragraph that says what could not run without the trial order, and how to get it."""
    unknown_rows = ~d["order_known"]
    if not unknown_rows.any():
        return None
    by_subject = d.groupby("subject_key")["order_known"].agg(["any", "all"])
    none_known = by_subject.index[~by_subject["any"]]
    partly = by_subject.index[by_subject["any"] & ~by_subject["all"]]
    n_all = d["subject_key"].nunique()
    files = sorted(set(d.loc[unknown_rows, "source_file"].map(lambda f: Path(str(f)).name)))
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    if len(none_known) == n_all:
        what, ran = f"for all {n_all} subject(s)", "They were not run."
    else:
        parts = []
        if len(none_known):
            parts.append(f"for {len(none_known)} of {n_all} subject(s)")
        if len(partly):
            parts.append(f"for some rows of {len(partly)} more subject(s) (rows without a log trial)")
        what = " and ".join(parts)
        ran = (f"They were run on the {int((~unknown_rows).sum())} row(s) whose order is known; the "
               f"{int(unknown_rows.sum())} row(s) of unknown order are left out of them (and of the trial and "
               "exposure counts).")
    return (f"The trial order is unknown {what} ({shown}): a results table without session logs (the public "
            "Lakretz et al. 2021 table merges each subject's two sessions and restarts trial_num in each), or "
            "rows imported from the table alone. Error rates, false alarms and the model-side measures need no "
            "order and are reported below. These analyses need each subject's trials in time order, which only "
            "the raw session logs hold: " + "; ".join(ORDER_ANALYSES) + ". " + ran + " To supply the order, "
            "import the table together with the logs: " + HOW_TO_ORDER + ".")


def outlier_text(outliers: dict) -> str:
    """Outlier handling as the report records it (seeds/000 kept what Lakretz et al. excluded)."""
    base = ("Outliers: Lakretz et al. (2021) exclude the subject they flag as an outlier (subject 68 of the "
            "release); seeds/000's Table C1 kept it (its denominators are 55, e.g. .618 = 34/55). ")
    if outliers.get("excluded"):
        return base + (f"Excluded here (the default, as the data's authors did): {', '.join(outliers['excluded'])}; "
                       "run with --keep-outliers to analyse all subjects as seeds/000 did.")
    if outliers.get("kept"):
        return base + f"Kept here (--keep-outliers, as seeds/000 did): {', '.join(outliers['kept'])}."
    policy = "kept (--keep-outliers)" if outliers.get("policy") == "keep" else "excluded (the default)"
    return f"Outliers: no subject in the data is flagged as an outlier (flagged subjects would be {policy})."
