"""Imported release sessions and replication sessions: one schema, one analysis, one report."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from analysis.load import load
from analysis.load.prepare import prepare
from experiments.design_compiler import compile_sequence
from experiments.session import SessionWriter
from experiments.spec import load_spec
from participants.rows import trial_row
from participants.rsvp import TrialResult

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lakretz2021"


def write_replication_session(root: Path, subject: str, session: int, n: int) -> None:
    """A panel session of the replication spec as the human runner writes it (answers drawn at random)."""
    exp = load_spec("lakretz2021_replication")
    seq = compile_sequence(exp, subject, session=session)
    rng = random.Random(f"{subject}:{session}")
    with SessionWriter.create(root, experiment=exp.name, subject_id=subject, session=session, subject_kind="human",
                              spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=n) as w:
        for tr in seq.trials[:n]:
            answer = rng.choice(["violation", "no_violation", "none"])
            early = tr.study_record.correct_response == "violation" and rng.random() < 0.5
            onsets = [610.0 + 492.0 * k for k in range(len(tr.words))]
            result = TrialResult(
                response=answer, correct=None if answer == "none" else answer == tr.study_record.correct_response,
                rt_ms=None if answer == "none" else rng.uniform(200, 1400), rt_sentence_end_ms=None,
                word_onsets_ms=onsets, word_durations_ms=[246.0] * len(onsets), feedback_shown=True,
                feedback_text="Correct!", started_at="", ended_at="", iti_onset=0.0, response_mode="panel",
                early_response="violation" if early else None,
                early_response_unit=tr.study_record.critical_index if early else None,
                early_response_ms=onsets[tr.study_record.critical_index] - onsets[0] + 300.0 if early else None)
            w.append(trial_row(tr, result, seq, subject_id=subject, session=session))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    if not (FIXTURES / "logs").is_dir():
        pytest.skip("the importer's fixtures (tests/fixtures/lakretz2021) are not in this checkout")
    from studies.lakretz2021.importers.release import import_lakretz2021

    root = tmp_path_factory.mktemp("both")
    imported, replication = root / "imported", root / "replication"
    summary = import_lakretz2021(FIXTURES / "dataframe_results_all_trials.csv", FIXTURES / "logs", imported)
    write_replication_session(replication, "P01", 1, 50)  # 40 training trials, then the main block
    write_replication_session(replication, "P01", 2, 12)
    return imported, replication, summary


def test_release_and_replication_sessions_load_as_one_table(folders):
    df, info = load(list(folders[:2]), keep_outliers=True)
    assert set(df["experiment"]) == {"lakretz2021", "lakretz2021_replication"}
    assert set(df["subject_kind"]) == {"human"} and set(df["response_mode"]) == {"panel"}
    by_source = {e: set(g["structure"]) for e, g in df.groupby("experiment")}
    assert by_source["lakretz2021"] & by_source["lakretz2021_replication"] >= {"long_nested", "short_nested"}
    for e, g in df.groupby("experiment"):  # fillers, panel answers and early presses in the same columns
        assert {"none", "other"} <= set(g["violation_position"]), e
        assert set(g["response"].dropna()) <= {"violation", "no_violation", "none"}, e
        early = g[g["early_response"].notna()]
        assert len(early) and early["early_response_unit"].notna().all() and (early["early_response_ms"] >= 0).all(), e
    assert set(df.loc[df["experiment"] == "lakretz2021_replication", "block"]) == {"training", "main"}

    # trials are ordered across sessions: session 2 continues after session 1
    p = prepare(df)
    p01 = p[p["subject_id"] == "P01"]
    assert list(p01["trials_before"]) == list(range(62))
    assert list(p01["session"]) == [1] * 50 + [2] * 12
    two = p[(p["subject_id"] == "L101")]
    s1 = (two["session"] == 1).sum()
    assert two.loc[two["session"] == 2, "trials_before"].min() == s1


@pytest.mark.slow
def test_one_report_for_both(folders, tmp_path):
    import pandas as pd

    from analysis.pipeline import Options, run_analysis

    imported, replication, summary = folders
    out = tmp_path / "report"
    run_analysis([imported, replication], out, Options(n_boot=50, mixed=False, keep_outliers=True), log=lambda s: None)
    assert (out / "report.html").exists()
    results = json.loads((out / "results.json").read_text())
    assert {Path(f).parent.parent for f in results["inputs"]["files"]} == {imported, replication}
    # one human group pooling both sources: the importer's subjects and sessions plus the replication's;
    # imported subjects without a row in the results table (a training-only pilot, a session-2-only
    # subject) are not among the analysed subjects and are counted as excluded
    from analysis.load import sidecar_in_results_table

    outside = [s for s in summary.sessions
               if not sidecar_in_results_table(
                   json.loads((imported / "data" / s["file"]).with_suffix(".json").read_text()))]
    assert outside, "the fixture has subjects outside the results table"
    sizes = pd.read_csv(out / "tables" / "sample_sizes.csv")
    (human,) = sizes.to_dict("records")
    n_imported_subjects = len({s["subject"] for s in summary.sessions} - {s["subject"] for s in outside})
    assert human["group"] == "human"
    assert human["subjects"] == n_imported_subjects + 1
    assert human["sessions"] == summary.sessions_written - len(outside) + 2
    assert human["trials"] == summary.rows_written - sum(s["rows"] for s in outside) + 62
    assert human["training_trials"] == 40  # the replication's; the imported training log is a pilot's (outside)
    excluded = pd.read_csv(out / "tables" / "exclusions.csv")
    assert excluded["what"].str.contains("no row in the results table").any()
