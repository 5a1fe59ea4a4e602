"""Options taken silently: every analysis option is checked against what it must name before any
work, by the one function the CLI and the API share (analysis/options.py without data,
analysis/option_checks.py with the loaded table). A focus naming a column that is no factor, a factor
given twice, `--blocks training` on sessions without training rows, a flag given as text, a "newest"
session chosen by sorting text, and a word-time range that trims every word are refused, naming what
the data hold, and nothing is written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis import api
from analysis.learning.general import FocusError
from analysis.load.rows import BlocksError
from analysis.load.spec_versions import SpecVersionError, start_time
from tests.project.test_shared_checks import cli
from tests.support import design_synthetic as ds
from tests.support import learning_synthetic as ls


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    return ls.learning_study(tmp_path_factory.mktemp("learning"), n_people=3, n_running=1, n_static=1)


@pytest.fixture(scope="module")
def judgments(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("judgments")
    ds.agreement_judgments(root, n_subjects=4, n_items=8)
    return root


@pytest.mark.parametrize("focus, said", [
    ("correct=True", "'correct' is not a factor of the design; the focus cell is FACTOR=LEVEL of its factors: "
                     "attractor, agreement"),
    ("attractor=match,attractor=mismatch", "names factor 'attractor' twice (attractor=match and attractor=mismatch)"),
    ("attractor=Match", "attractor has no level 'Match'; its levels are match, mismatch"),
])
def test_a_focus_names_one_level_of_each_declared_factor(study, tmp_path, focus, said):
    with pytest.raises((FocusError, api.InputError), match=said.replace("(", r"\(").replace(")", r"\)")):
        api.report(study, tmp_path / "out", mixed=False, n_boot=10, focus=focus)
    assert not (tmp_path / "out").exists()
    code, text = cli("analyze", str(study), "--out", str(tmp_path / "cli"), "--no-mixed", "--focus", focus)
    assert code == 2 and said in text, text
    assert not (tmp_path / "cli").exists()


def test_a_focus_factor_outside_the_by_cell_is_refused_and_a_good_focus_runs(study, tmp_path):
    with pytest.raises(FocusError, match="'agreement' is a factor of the design but not of the cell --by chooses "
                                         r"\(attractor\)"):
        api.report(study, tmp_path / "a", mixed=False, n_boot=10, focus="agreement=broken", by=["attractor"])
    res = api.report(study, tmp_path / "b", mixed=False, n_boot=10, focus="attractor=mismatch,agreement=broken")
    assert res["options"]["focus"] == "attractor=mismatch,agreement=broken"


def test_a_factor_given_twice_in_by_is_refused_naming_it_in_the_cli_and_the_api(study, tmp_path):
    # round 4: a traceback from pandas ("Buffer has wrong number of dimensions") after the report had started
    code, text = cli("analyze", str(study), "--out", str(tmp_path / "out"), "--no-mixed", "--by",
                     "attractor,agreement,attractor")
    assert code == 2 and "--by names 'attractor' twice (attractor, agreement, attractor)" in text, text
    assert not (tmp_path / "out").exists()
    with pytest.raises(api.InputError, match="names 'attractor' twice"):
        api.report(study, tmp_path / "out", mixed=False, by="attractor, attractor")
    df = api.load_sessions(study)
    with pytest.raises(api.InputError, match="names 'agreement' twice"):
        api.rates(df, by=["agreement", "agreement"], n_boot=10)


def test_blocks_training_on_sessions_without_training_rows_is_refused(judgments, study, tmp_path):
    code, text = cli("analyze", str(judgments), "--out", str(tmp_path / "out"), "--no-mixed", "--blocks", "training")
    assert code == 2 and "--blocks training: the sessions have no training rows" in text, text
    assert "their blocks are test" in text and not (tmp_path / "out").exists()
    with pytest.raises(BlocksError, match="would choose only the test rows"):
        api.report(judgments, tmp_path / "out", mixed=False, n_boot=10, blocks="training,test")
    # with training rows the same option runs, and its tables hold exactly the training trials
    res = api.report(study, tmp_path / "ok", mixed=False, n_boot=10, blocks="training")
    sizes = json.loads((tmp_path / "ok" / "results.json").read_text(encoding="utf-8"))["options"]
    assert sizes["blocks"] == "training" and res["tables"]


@pytest.mark.parametrize("value", ["no", "yes", 0, 1, None, "False"])
def test_a_flag_is_true_or_false_never_a_text_read_as_true(study, tmp_path, value):
    from analysis.power.settings import PowerInputError, PowerSettings, check_settings

    s = PowerSettings(data=[], formula="correct ~ attractor + (1 | subject)", term="attractor", subjects=[8],
                      early_stop=value)
    with pytest.raises(PowerInputError, match=f"early_stop .* must be True or False, not {value!r}"):
        check_settings(s)
    s.early_stop = False  # the same settings with a real flag pass
    assert check_settings(s).response_var == "correct"
    with pytest.raises(api.InputError, match="mixed .* must be True or False"):
        api.report(study, tmp_path / "out", n_boot=10, mixed=value)
    with pytest.raises(api.InputError, match="allow_spec_versions must be True or False"):
        api.load_sessions(study, allow_spec_versions=value)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ the newest session, read as a time
def _versions(root: Path, times: list[str], flipped: int) -> None:
    """Four sessions started at `times`; session `flipped` lists head_number's levels the other way round."""
    for k, p in enumerate(ds.agreement_judgments(root, n_subjects=4, n_items=8)):
        side = p.with_suffix(".json")
        meta = json.loads(side.read_text(encoding="utf-8"))
        meta |= {"spec_hash": "h9" if k == flipped else "h", "experiment": "agreement_attraction",
                 "started_at": times[k]}
        if k == flipped:
            meta["design"]["factors"] = {**ds.FACTORS, "head_number": ["pl", "sg"]}
        side.write_text(json.dumps(meta), encoding="utf-8")


def test_the_newest_session_is_read_from_times_not_text(tmp_path):
    # S03 started at 13:30 UTC, the newest; as text its "11:30-02:00" sorts before S00's "12:00+00:00"
    _versions(tmp_path, ["2026-11-20T12:00:00+00:00", "2026-11-20T10:00:00+00:00", "2026-11-20T09:00:00+00:00",
                         "2026-11-20T11:30:00-02:00"], flipped=3)
    df = api.load_sessions(tmp_path, allow_spec_versions=True)
    assert api.factors(df)["head_number"] == ["pl", "sg"]  # S03's order: it is the newest
    assert "the newest session: study-agreement_attraction_subject-S03" in " ".join(df.attrs["load_info"].notes)
    assert start_time("unknown") is None and start_time("2026-11-20T11:30:00-02:00").hour == 11


@pytest.mark.parametrize("times, why", [
    (["2026-11-20T10:00:00+00:00", "unknown", "2026-11-20T11:00:00+00:00", "2026-11-20T12:00:00+00:00"],
     r"the start time of 1 session\(s\) is not a time \(study-agreement_attraction_subject-S01_session-1_data.csv: "
     r"started_at 'unknown'\)"),
    (["2026-11-20T10:00:00+00:00", "2026-11-20T11:00:00", "2026-11-20T11:00:00+00:00", "2026-11-20T09:00:00+00:00"],
     "the start time of study-agreement_attraction_subject-S01_session-1_data.csv has no time zone and others "
     "have one"),
    (["2026-11-20T10:00:00+00:00", "2026-11-20T12:00:00+00:00", "2026-11-20T11:00:00+00:00",
      "2026-11-20T13:00:00+01:00"], "sessions of different versions started at the same newest time "
     r"2026-11-20T12:00:00\+00:00 \(study-agreement_attraction_subject-S01_session-1_data.csv, "
     "study-agreement_attraction_subject-S03"),
])
def test_allow_spec_versions_refuses_when_the_newest_cannot_be_told(tmp_path, times, why):
    # as text, "unknown" sorted after every date: its session (here S01, the flipped one) coded everyone
    _versions(tmp_path, times, flipped=1)
    with pytest.raises(SpecVersionError, match="which session is newest cannot be told: " + why):
        api.load_sessions(tmp_path, allow_spec_versions=True)
    with pytest.raises(SpecVersionError, match="the newest session's version \\(which cannot be told: " + why):
        api.load_sessions(tmp_path)


# ------------------------------------------------------------------ a word-time range that trims every word
def test_a_word_rt_range_that_trims_every_word_is_refused_with_the_times(tmp_path):
    from analysis.measures.reading import ReadingRules, kept_word_times

    paths, _ = ds.reading_sessions(tmp_path / "data", n_subjects=2, n_items=4)
    df = api.load_sessions(tmp_path / "data")
    people = df[df["subject_kind"] != "model"]
    times = [x for v in people["word_rts_ms"] for x in json.loads(v)]  # the hand count
    n, kept, low, high = kept_word_times(df, ReadingRules(0, 1))
    assert (n, kept, low, high) == (len(times), 0, min(times), max(times))
    mid = sorted(times)[len(times) // 2]
    assert kept_word_times(df, ReadingRules(0, mid))[1] == sum(t <= mid for t in times)
    # round 4: a traceback from inside the region table
    code, text = cli("analyze", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--no-mixed",
                     "--word-rt-range", "0,1")
    assert code == 2 and f"--word-rt-range 0,1 leaves out every one of the {len(times)} word reading times" in text
    assert f"from {min(times):g} to {max(times):g} ms" in text and not (tmp_path / "out").exists()
    # the API's reading tables under such a rule: empty, not a crash
    tabs = api.reading_times(df, n_boot=10, rules=ReadingRules(0, 1))
    assert (tabs["region_rt"].empty
            and int(tabs["rules"].set_index("rule").loc["rt_range", "words_removed"]) == len(times))
