"""Loading trial tables: schema dtypes, clear errors on broken files, the Lakretz et al. (2021) importer."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.load import LoadError, load
from analysis.load.prepare import prepare
from analysis.simulate import simulate_sessions
from experiments.schema import COLUMN_NAMES, DTYPES
from studies.lakretz2021.frame import import_lakretz_frame
from studies.lakretz2021.simulate import simulate_lakretz_rows

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sessions")
    simulate_sessions(root, 2, seed=1, trials=60)
    return root


def _one_file(sessions: Path) -> Path:
    return sorted((sessions / "data").glob("*_data.csv"))[0]


def _copy(src: Path, dst_dir: Path, edit) -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / src.name
    dst.write_text(edit(src.read_text(encoding="utf-8")), encoding="utf-8")
    return dst


def test_sessions_load_with_schema_dtypes(sessions):
    df, info = load([sessions])
    assert len(info.files) == 2 and set(info.formats.values()) == {"twinlab"}
    assert len(df) == 120
    for c in COLUMN_NAMES:
        assert str(df[c].dtype) == DTYPES[c].replace("string", "string"), c
    assert df["correct"].dtype == "boolean" and df["trial_index"].dtype == "Int64"
    # values survive the round trip through the CSV
    assert set(df["violation_position"].dropna()) <= {"none", "inner", "outer"}
    assert df.groupby("subject_id")["trial_index"].apply(lambda s: list(s) == list(range(60))).all()


def test_folder_file_and_duplicates_are_deduplicated(sessions):
    f = _one_file(sessions)
    df, info = load([sessions, f])  # the same file twice is read once
    assert len(info.files) == 2 and len(df) == 120


def test_missing_required_column_names_file_and_column(sessions, tmp_path):
    f = _one_file(sessions)
    bad = _copy(f, tmp_path, lambda t: "\n".join(",".join(c for k, c in enumerate(line.split(",")) if k != 1)
                                                  for line in t.splitlines()))
    # column 1 is subject_kind in the schema order
    assert COLUMN_NAMES[1] == "subject_kind"
    with pytest.raises(LoadError, match=r"study-.*_data\.csv: required column 'subject_kind' is missing"):
        load([bad])


def test_misnamed_column_suggests_the_right_name(sessions, tmp_path):
    bad = _copy(_one_file(sessions), tmp_path, lambda t: t.replace("violation_position", "violation_pos", 1))
    with pytest.raises(LoadError, match=r"unknown column 'violation_pos' \(did you mean 'violation_position'\?\)"):
        load([bad])


def test_bad_values_name_column_and_line(sessions, tmp_path):
    f = _one_file(sessions)
    lines = f.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = next(__import__("csv").reader([lines[3]]))
    cells[header.index("trial_index")] = "two"
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    bad = _copy(f, tmp_path / "a", lambda t: "\n".join(lines[:3] + [buf.getvalue().rstrip("\n")] + lines[4:]) + "\n")
    with pytest.raises(LoadError, match=r"column 'trial_index', line 4: 'two' is not a number"):
        load([bad])
    bad2 = _copy(f, tmp_path / "b",
                 lambda t: t.replace(",long_nested,", ",long_nested,", 1).replace(",inner,", ",middle,", 1))
    with pytest.raises(LoadError, match=r"'middle' is not one of .*inner"):
        load([bad2])
    bad3 = _copy(f, tmp_path / "c", lambda t: t.replace(",True,", ",maybe,", 1))
    with pytest.raises(LoadError, match=r"'maybe' is not True or False"):
        load([bad3])


def test_empty_and_missing_inputs(tmp_path):
    with pytest.raises(LoadError, match="no such file or folder"):
        load([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoadError, match="folder holds no trial tables"):
        load([tmp_path / "empty"])
    e = tmp_path / "x_data.csv"
    e.write_text("", encoding="utf-8")
    with pytest.raises(LoadError, match="no trials to analyse: x_data.csv: skipped, the file is empty"):
        load([e])


def test_same_session_in_two_files_is_an_error(sessions, tmp_path):
    f = _one_file(sessions)
    other = tmp_path / "copy" / f.name
    other.parent.mkdir()
    other.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(LoadError, match="appears in two files"):
        load([f, other])


def test_sidecar_model_name_and_status(tmp_path):
    simulate_sessions(tmp_path, 1, subject_kind="model", prefix="M", model="tiny-lm", protocol="forced_choice",
                      context_mode="none", trials=10)
    side = next((tmp_path / "data").glob("*_data.json"))
    meta = json.loads(side.read_text())
    meta["status"] = "aborted"
    side.write_text(json.dumps(meta))
    df, info = load([tmp_path])
    assert set(df["model"]) == {"tiny-lm"}
    assert any("aborted" in n for n in info.notes)
    d = prepare(df)
    assert set(d["group"]) == {"tiny-lm · none · forced_choice"}


# ---- Lakretz et al. (2021) ---------------------------------------------------------------------------
def test_lakretz_synthetic_file_maps_onto_the_schema():
    df, info = load([DATA / "lakretz_synthetic.csv"])
    assert info.formats[str(DATA / "lakretz_synthetic.csv")] == "lakretz"
    raw = pd.read_csv(DATA / "lakretz_synthetic.csv")
    kept = raw[~raw["is_outlier"]]
    assert len(df) == len(kept) and df["subject_id"].nunique() == kept["subject"].nunique()
    for c in COLUMN_NAMES:
        assert str(df[c].dtype) == DTYPES[c], c
    # exclusions are counted, not silently dropped
    ex = {e["what"].split(" in ")[0]: e["rows"] for e in info.exclusions}
    assert ex["REJECTED answers"] == int((kept["valid_answer"] == "REJECTED").sum())
    assert ex["outlier subject(s) L6"] == int(raw["is_outlier"].sum())
    assert info.outliers == {"policy": "exclude", "kept": [], "excluded": ["L6"]}
    assert df["correct"].isna().sum() == ex["REJECTED answers"]
    # structure from sentence_type; V1/V2 = first/second verb in linear order
    merged = df.assign(vt=[json.loads(e)["violation_type"] for e in df["extra"]])
    nested = merged[merged["structure"].isin(["long_nested", "short_nested"])]
    assert set(nested.loc[nested["vt"] == "V1", "violation_position"]) == {"inner"}
    assert set(nested.loc[nested["vt"] == "V2", "violation_position"]) == {"outer"}
    succ = merged[merged["structure"].isin(["long_successive", "short_successive"]) & (merged["vt"] != "None")]
    assert set(succ.loc[succ["vt"] == "V1", "violation_position"]) == {"outer"}
    assert set(succ.loc[succ["vt"] == "V2", "violation_position"]) == {"inner"}
    assert set(df.loc[df["violation_position"] == "other", "extra"].map(
        lambda e: json.loads(e)["trial_type"])) == {"Filler"}
    assert (df.loc[df["violation_position"] == "none", "correct_response"] == "no_violation").all()
    # a correct violation trial means the subject reported the violation
    v = df[(df["violation_position"] == "inner") & df["correct"].fillna(False)]
    assert (v["response"] == "violation").all()


def test_lakretz_trial_order_is_rebuilt_from_block_and_trial_num(tmp_path):
    rows = simulate_lakretz_rows(3, seed=11)
    assert not rows["_true_order"].is_monotonic_increasing  # the public file is sorted by design cells
    path = tmp_path / "lakretz.csv"
    rows.to_csv(path, index=False)
    df, _ = import_lakretz_frame(path)
    for subj, g in rows.groupby("subject"):
        truth = g.sort_values("_true_order")[["sentence_type", "condition", "violation_type", "trial_type"]]
        got = df[df["subject_id"] == f"L{subj}"].sort_values("trial_index")
        got_extra = got["extra"].map(json.loads)
        assert list(got["condition"]) == list(truth["condition"])
        assert [e["violation_type"] for e in got_extra] == list(truth["violation_type"])
        assert list(got["trial_index"]) == list(range(len(g)))


def test_lakretz_sessions_and_duplicate_positions(tmp_path):
    df, _ = import_lakretz_frame(DATA / "lakretz_synthetic_sessions.csv")
    assert set(df["session"]) == {1, 2}
    d = prepare(df.assign(source_file="x", session_status="completed", model=pd.NA))
    # trials_before runs across the two sessions
    assert d.groupby("subject_key")["trials_before"].max().eq(d.groupby("subject_key").size() - 1).all()
    # as in the public release: no session column, trial_num restarts -> order unknown, rows kept
    with_session = pd.read_csv(DATA / "lakretz_synthetic_sessions.csv")
    no_session = with_session.drop(columns="session")
    p = tmp_path / "nosession.csv"
    no_session.to_csv(p, index=False)
    df2, info2 = import_lakretz_frame(p)
    assert len(df2) == len(no_session) and not df2["order_known"].any() and df2["session"].isna().all()
    assert any("order of this file is unknown" in n for n in info2.notes)
    d2 = prepare(df2.assign(source_file="x", session_status="completed", model=pd.NA))
    assert d2[["trials_before", "exposures", "exposures_structure"]].isna().all().all()
    assert not d2["first_encounter"].any() and d2["session"].isna().all()
    assert d2["scored"].sum() == d["scored"].sum()  # every scored trial is still scored
    # with a session column, a repeated position is an error (the order is then really broken)
    with_session.loc[1, ["block", "trial_num"]] = with_session.loc[0, ["block", "trial_num"]].to_numpy()
    with_session.loc[1, ["subject", "session"]] = with_session.loc[0, ["subject", "session"]].to_numpy()
    with_session.to_csv(p, index=False)
    with pytest.raises(LoadError, match=r"nosession\.csv: subject \d+, session \d+ has more than one trial"):
        import_lakretz_frame(p)


def test_lakretz_broken_files(tmp_path):
    raw = pd.read_csv(DATA / "lakretz_synthetic.csv")
    p = tmp_path / "a.csv"
    raw.drop(columns="trial_num").to_csv(p, index=False)
    with pytest.raises(LoadError, match=r"a\.csv: Lakretz results column 'trial_num' is missing"):
        load([p], "lakretz")
    r2 = raw.copy()
    r2.loc[5, "sentence_type"] = "objrel_nounpp_deep"
    r2.to_csv(p, index=False)
    with pytest.raises(LoadError, match="unknown value.*objrel_nounpp_deep"):
        load([p])
    r3 = raw.copy().astype({"valid_answer": str})
    r3.loc[2, "valid_answer"] = "MAYBE"
    r3.to_csv(p, index=False)
    with pytest.raises(LoadError, match=r"column 'valid_answer', line 4: 'MAYBE'"):
        load([p])


def test_lakretz_keep_outliers_and_training_blocks():
    df, info = import_lakretz_frame(DATA / "lakretz_synthetic.csv", keep_outliers=True, training_blocks=["1"])
    assert df["subject_id"].nunique() == 6
    d = prepare(df.assign(source_file="x", session_status="completed", model=pd.NA))
    assert set(d.loc[d["training"], "block"]) == {"training"}
    assert d.loc[d["training"], "exposures"].isna().all()
    assert (d.loc[~d["training"], "exposures"].notna()).all()
