"""Integration: `twinlab import lakretz2021` on the real public sample (skipped where it is absent).

References are computed independently from the raw files with plain pandas/csv, not with the importer.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis.load import load
from experiments.cli import app

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "lakretz2021_sample"
if not SAMPLE.exists():  # a worktree one level deeper than the main checkout
    SAMPLE = Path(__file__).resolve().parents[4] / "shared" / "data" / "lakretz2021_sample"
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason="the shared Lakretz et al. (2021) sample is not here")
TABLE = SAMPLE / "dataframe_results_all_trials_sample.csv"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("lakretz") / "sessions"
    res = CliRunner().invoke(app, ["import", "lakretz2021", "--results", str(TABLE), "--logs", str(SAMPLE / "logs"),
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    df, _ = load([out], keep_outliers=True)
    df["x"] = df["extra"].map(json.loads)
    return out, df, res.output


def _end_trials(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.reader(fh, delimiter="\t") if r and r[0] == "END_TRIAL"]


def test_every_table_row_matches_a_log_trial_and_rows_per_subject(imported):
    out, df, output = imported
    table = pd.read_csv(TABLE, dtype=str, keep_default_na=False)
    matched = df[df["x"].map(lambda e: e["source"] == "log+table")]
    assert len(matched) == len(table) == 2561
    assert sorted(matched["x"].map(lambda e: e["table_line"])) == list(range(2, len(table) + 2))
    per_subject = matched.groupby("subject_id").size().to_dict()
    assert per_subject == {"L21": 540, "L22": 540, "L43": 400, "L66": 541, "L68": 540}
    assert (df["x"].map(lambda e: e["match"]) == "table_only").sum() == 0
    # subject 57 (logs only) and the training log of subject 06 are imported, not dropped
    assert (df["subject_id"] == "L57").sum() == 270
    assert set(df.loc[df["subject_id"] == "L6", "block"]) == {"training"}
    assert "2561" in output and "270" in output


def test_rows_are_in_log_order_session_1_then_2(imported):
    _, df, _ = imported
    for (_sid, _sess), g in df.groupby(["subject_id", "session"]):
        assert g["trial_index"].tolist() == list(range(len(g)))
        assert g["started_at"].is_monotonic_increasing
        lines = g["x"].map(lambda e: e["log_line"]).tolist()
        assert lines == sorted(lines)
    s21 = df[df["subject_id"] == "L21"].sort_values(["session", "trial_index"])
    assert s21["started_at"].is_monotonic_increasing  # session 1 (14:32) before session 2 (15:26)
    log = SAMPLE / "logs" / "logLocalGlobalParadigm_2019Oct23_143202_Subj_21_sess_1.csv"
    outcomes = [r[5] for r in _end_trials(log)]
    got = s21[s21["session"] == 1]["x"].map(lambda e: e["outcome"]).tolist()
    assert got == outcomes


def test_error_rates_equal_a_plain_pandas_computation_on_the_table(imported):
    _, df, _ = imported
    t = pd.read_csv(TABLE)
    v = t[(t.sentence_type == "objrel_nounpp") & (t.trial_type == "Violation")
          & t.valid_answer.isin(["CORRECT", "WRONG"])]
    ref = (v.valid_answer == "WRONG").groupby([v.violation_position, v.condition]).mean()
    d = df[df["x"].map(lambda e: e["source"] == "log+table") & (df["structure"] == "long_nested")
           & df["dependency"].isin(["inner", "outer"]) & df["correct"].notna()]
    mine = (1 - d["correct"].astype(float)).groupby([d["dependency"], d["condition"]]).mean()
    assert len(ref) == 16
    assert mine.to_dict() == pytest.approx(ref.to_dict(), abs=1e-12)


def _field_shapes(folder: Path) -> dict[str, set[int]]:
    shapes: dict[str, set[int]] = {}
    for p in sorted(folder.glob("*.csv")):
        with open(p, newline="", encoding="utf-8") as fh:
            for r in list(csv.reader(fh, delimiter="\t"))[1:]:
                shapes.setdefault(r[0], set()).add(len(r))
    return shapes


def test_the_fixtures_copy_the_real_format():
    """Same header, line ends, events with the same field counts, num2str precision, table header."""
    from studies.lakretz2021.importers.format import num2str

    fix = Path(__file__).parent.parent / "fixtures" / "lakretz2021"
    real_log = next((SAMPLE / "logs").glob("logLocal*.csv")).read_bytes()
    fix_log = next((fix / "logs").glob("logLocal*.csv")).read_bytes()
    assert fix_log.split(b"\r\n")[0] == real_log.split(b"\r\n")[0]
    assert fix_log.count(b"\r\n") == fix_log.count(b"\n")
    assert _field_shapes(fix / "logs") == _field_shapes(SAMPLE / "logs")
    assert TABLE.read_bytes().split(b"\n")[0] == (fix / "dataframe_results_all_trials.csv").read_bytes().split(b"\n")[0]
    # every time the release prints is reproduced by num2str from its value
    with open(SAMPLE / "logs" / "logLocalGlobalParadigm_2019Oct23_143202_Subj_21_sess_1.csv", newline="") as fh:
        times = [r[6] for r in list(csv.reader(fh, delimiter="\t"))[1:]]
    assert len(times) > 5000 and all(num2str(float(t)) == t for t in times)
    rts = pd.read_csv(TABLE, dtype=str)["RT"]
    assert all(num2str(float(t)) == t for t in rts)


def test_answers_rts_and_early_presses_equal_the_raw_log_lines(imported):
    """Row by row against a plain csv reading of one real log (independent of the importer's parser)."""
    _, df, _ = imported
    log = SAMPLE / "logs" / "logLocalGlobalParadigm_2019Nov07_110058_Subj_43_sess_1.csv"
    with open(log, newline="", encoding="utf-8") as fh:
        lines = list(csv.reader(fh, delimiter="\t"))[1:]
    per_trial: dict[str, dict] = {}
    for r in lines:
        if r[0] in ("GrandStart", "BlockStart"):
            continue
        t = per_trial.setdefault(r[2], {"words": [], "keys": []})
        if r[0] == "FIX_ON":
            t["fix"] = float(r[6])
        elif r[0] == "WORD_ON":
            t["words"].append((r[5], float(r[6])))
        elif r[0] == "KEY_PRESS" and "panel" not in t:
            t["keys"].append((int(r[4]), float(r[6])))
        elif r[0] == "PanelOn":
            t["panel"] = True
        elif r[0] == "PanelResp":
            t["answer"], t["rt"] = r[5], float(r[6])
    rows = df[(df["subject_id"] == "L43") & (df["session"] == 1)]
    assert len(rows) == len(per_trial) == 270
    n_keys = 0
    for (trial, t), row in zip(per_trial.items(), rows.itertuples(), strict=False):
        assert row.x["log_trial"] == int(trial)
        assert row.words == " ".join(w for w, _ in t["words"])
        assert row.response == {"VIOLATION": "violation", "ACCEPTABLE": "no_violation", "": "none"}[t["answer"]]
        if t["answer"]:
            assert row.rt_ms == pytest.approx(t["rt"] * 1000, abs=1e-6)
        assert json.loads(row.word_onsets_ms) == pytest.approx([(o - t["fix"]) * 1000 for _, o in t["words"]],
                                                               abs=0.051)
        if t["keys"]:
            n_keys += 1
            slide, at = t["keys"][0]
            assert row.early_response == "violation" and row.early_response_unit == slide - 1
            assert row.early_response_ms == pytest.approx((at - t["words"][0][1]) * 1000, abs=1e-6)
        else:
            assert pd.isna(row.early_response)
    assert n_keys > 10
