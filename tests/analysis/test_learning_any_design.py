"""Learning from training with feedback, analysed for any design (not only the Lakretz one).

A 2 x 2 mini-grammar study (tests/support/learning_synthetic.py): a training block with feedback, then a
test block; people learn, one model group has a running context, one has context `none`. Checked against
independent references: first encounters counted by hand from the CSVs, a direct lme4 glmer on all rows,
and the Lakretz sections' own functions on the Lakretz cells (the general analyses with the paper's
configuration give their numbers)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import api
from studies.lakretz2021.learning import LAKRETZ
from tests.support import learning_synthetic as ls

HUMAN = "human"
RUNNING = "tiny · running · judgment:meta"
STATIC = "tiny · none · judgment:meta"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return ls.learning_study(tmp_path_factory.mktemp("learning"))


@pytest.fixture(scope="module")
def df(study):
    return api.load_sessions(study)


def test_order_columns_are_columns_of_every_general_table(df):
    p0 = df[df["subject_id"] == "P0"].sort_values("trial_index")
    assert list(p0["block_kind"][:16]) == ["training"] * 16 and set(p0["block_kind"][16:]) == {"test"}
    assert list(p0["trial_position"]) == list(range(1, 17)) + list(range(1, 25))
    assert list(p0["trials_before"]) == list(range(40)) and list(p0["exposures_any"]) == list(range(40))
    # exposures: earlier trials of the same attractor x agreement cell, training included (4 per cell there)
    for _, g in p0.groupby(["attractor", "agreement"]):
        assert list(g["exposures"]) == list(range(len(g)))
        first_test = g[g["block"] == "test"].iloc[0]
        assert first_test["exposures"] == 4 and first_test["first_encounter"]
    assert p0["first_encounter"].sum() == 4 and not p0.loc[p0["block"] == "training", "first_encounter"].any()


def test_first_encounter_equals_a_hand_count_from_the_csvs(study, df):
    hand = ls.first_encounters_by_hand(study)
    for rule in ("paper", "strict"):  # no release codes in twinlab's sessions: both rules agree
        fe = api.first_encounter(df, rule=rule, n_boot=50)
        got = {("human" if r.group == HUMAN else ("running" if r.group == RUNNING else "none"), r.attractor,
                r.agreement): (r.n_errors, r.n_subjects) for r in fe.itertuples()}
        assert got == hand
    # P0's first mismatch-broken test trial has no answer: P0 leaves that cell (5 people, not promoted)
    assert hand[("human", "mismatch", "broken")][1] == 5


def test_the_api_frame_behaves_as_a_plain_dataframe(df):
    other = df[["subject_key"]].drop_duplicates().assign(age=1)
    assert len(df.merge(other, on="subject_key")) == len(df)
    desc = df.groupby("group")["error"].describe()
    assert set(desc.index) == {HUMAN, RUNNING, STATIC}
    assert len(pd.concat([df, df])) == 2 * len(df)
    assert all(not isinstance(v, pd.DataFrame) for v in df.attrs.values())
    assert isinstance(api.model_copies(df), pd.DataFrame)


def test_blocks_select_rows_and_are_refused_when_unknown(df):
    from analysis.load.rows import BlocksError, parse_blocks, select_blocks

    assert len(select_blocks(df, "test")) == 24 * 12 and len(select_blocks(df, "all")) == len(df) == 40 * 12
    assert len(select_blocks(df, "training,test")) == len(df) and parse_blocks("test,training") == "training,test"
    with pytest.raises(BlocksError, match="test .*training,test or all"):
        parse_blocks("everything")
    with pytest.raises(api.InputError, match="blocks"):
        api.fit(df, "correct ~ exposures", blocks="nope")


def test_learning_curves_hold_people_and_each_model_group_training_included(study, tmp_path):
    res = api.report(study, tmp_path / "out", mixed=False, n_boot=50, show_progress=False)
    ids = [s["id"] for s in res["sections"]]
    assert {"learning_first_encounter", "learning_curves"} <= set(ids)
    curves = pd.read_csv(tmp_path / "out" / "tables" / "learning_curves.csv")
    for g in (HUMAN, RUNNING, STATIC):
        for kind in ("training", "test"):
            assert ((curves["group"] == g) & (curves["block_kind"] == kind)).any(), (g, kind)
    # a point of the curve equals the plain mean of its rows (people, training, first trial of the block)
    raw = pd.concat(pd.read_csv(f, dtype=str) for f in (study / "data").glob("study-*_subject-P*_data.csv"))
    first = raw[(raw["block"] == "training") & (raw["block_trial_index"] == "0")]
    pt = curves[(curves["group"] == HUMAN) & (curves["x_name"] == "trial_position")
                & (curves["block_kind"] == "training")
                & (curves["x"] == 1)].iloc[0]
    assert pt["error_rate"] == pytest.approx((first["correct"] == "False").mean()) and pt["n_subjects"] == 6
    assert curves["rt_mean"].notna().any() and (tmp_path / "out" / "figures" / "learning_curves.png").exists()
    text = next(s["text"] for s in res["sections"] if s["id"] == "learning_curves")
    assert "blocks test, training" in text and "roles practice, test" in text


def test_a_design_without_training_or_feedback_has_no_learning_section(tmp_path):
    from tests.support import design_synthetic as ds

    ds.agreement_judgments(tmp_path / "h", n_subjects=2, n_items=8)
    res = api.report(tmp_path / "h", tmp_path / "out", mixed=False, n_boot=20, show_progress=False)
    assert not [s for s in res["sections"] if s["id"].startswith("learning")]


def test_order_columns_pass_the_formula_and_by_checks(df):
    from analysis.pipeline import Options, check_by_and_formula
    from analysis.stats.formula import FormulaError

    check_by_and_formula(df, Options(formula="correct ~ exposures * block + trial_position + (1|subject)",
                                     by=["block_kind", "first_encounter"]))
    with pytest.raises(FormulaError, match="exposure"):  # a misspelt column is still refused
        check_by_and_formula(df, Options(formula="correct ~ exposure + (1|subject)"))


def test_lakretz_cells_through_the_general_functions_give_the_lakretz_numbers():
    """The general first-encounter table and focus rows, configured with the paper's cells and rule, give the
    hand-checked Table C1 cells of the sample under both rules, and the focus rows are the post-training
    answered trials of the cell counted directly on the frame."""
    from analysis.learning import general as ln
    from analysis.load import load
    from analysis.options import Options
    from studies.lakretz2021.report import lakretz_rows
    from tests.reproductions.test_appendix_c import SAMPLE

    if not SAMPLE.exists():
        pytest.skip("../shared/data/lakretz2021_sample is not here")
    import shutil
    import tempfile
    from pathlib import Path

    from studies.lakretz2021.importers.release import import_lakretz2021

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table = SAMPLE / "dataframe_results_all_trials_sample.csv"
        subjects = set(pd.read_csv(table)["subject"])
        (tmp / "logs").mkdir()
        for p in (SAMPLE / "logs").iterdir():
            if any(f"_Subj_{s}_sess_" in p.name for s in subjects):
                shutil.copy(p, tmp / "logs" / p.name)
        import_lakretz2021(table, tmp / "logs", tmp / "imp")
        raw, info = load([tmp / "imp"], keep_outliers=True)
    r = lakretz_rows(raw, info, Options(keep_outliers=True))
    c1 = ln.first_encounter_table(r.od, LAKRETZ, n_boot=20)
    c1 = c1[(c1["group"] == "human") & (c1["structure"] == "long_nested")].set_index(
        ["violation_position", "condition"])
    assert len(c1) == 16 and tuple(c1.loc[("inner", "PSP"), ["n_errors", "n_subjects"]]) == (3, 5)  # paper rule
    strict = ln.first_encounter_table(r.od_other, LAKRETZ, n_boot=20).set_index(
        ["group", "structure", "violation_position", "condition"])
    assert tuple(strict.loc[("human", "long_nested", "inner", "PSP"), ["n_errors", "n_subjects"]]) == (2, 4)
    focus = {"structure": "long_nested", "condition": "PSP", "violation_position": "inner"}
    direct = r.od[(r.od["structure"] == "long_nested") & (r.od["condition"] == "PSP") & ~r.od["training"]
                  & (r.od["violation_position"] == "inner") & r.od["error"].notna()]
    mine = ln.focus_data(r.od[~r.od["training"]], LAKRETZ, focus)
    assert len(mine) == len(direct) > 0 and list(mine["error"]) == list(direct["error"].astype(int))
    assert ln.parse_focus_path("long_nested:PSP:inner", LAKRETZ) == focus
    with pytest.raises(ValueError, match="STRUCTURE:CONDITION:inner|outer"):
        ln.parse_focus_path("long_nested:PSP", LAKRETZ)


@pytest.mark.slow
def test_blocks_all_reproduces_a_direct_lme4_fit_on_all_rows(r_ready, df):
    """`--blocks all` fits every row (training too) and gives what lme4::glmer gives on them; the default
    (test) fits fewer rows and says so."""
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    h = df[df["group"] == HUMAN]
    fit = api.fit(h, "correct ~ exposures + block + (1|subject)", blocks="all")
    test_only = api.fit(h, "correct ~ exposures + (1|subject)")
    answered = h[h["correct"].notna()]
    assert fit.n_obs == len(answered) == 239 and test_only.n_obs == answered["block"].eq("test").sum()
    d = pd.DataFrame({"y": answered["correct"].astype(float).to_numpy(),
                      "x": answered["exposures"].astype(float).to_numpy(),
                      "b": np.where(answered["block"] == "test", 1.0, -1.0),
                      "s": answered["subject_key"].astype(str).to_numpy()})
    with localconverter(ro.default_converter + pandas2ri.converter):
        rd = ro.conversion.py2rpy(d)
    ref = list(ro.r("function(d) { m <- lme4::glmer(y ~ x + b + (1 | s), data = d, family = binomial); "
                    "c(lme4::fixef(m), as.numeric(logLik(m))) }")(rd))
    assert fit.coef("exposures")["estimate"] == pytest.approx(ref[1], abs=1e-4)
    assert abs(fit.coef(next(c["term"] for c in fit.coefficients if c["term"].startswith("block")))["estimate"]) \
        == pytest.approx(abs(ref[2]), abs=1e-4)
    assert fit.loglik == pytest.approx(ref[3], abs=1e-4)


@pytest.mark.slow
def test_exposure_models_on_a_focus_cell_fit_people_and_the_running_group_only(r_ready, study, tmp_path):
    res = api.report(study, tmp_path / "out", n_boot=20, show_progress=False, blocks="all",
                     focus="attractor=mismatch,agreement=broken")
    sec = next(s for s in res["sections"] if s["id"] == "learning_exposure_models")
    fitted = {i["group"] for i in sec["items"] if i["kind"] == "mixed"}
    assert fitted == {HUMAN, RUNNING}
    assert any(i["kind"] == "text" and STATIC in i["text"] and "no earlier trial" in i["text"] for i in sec["items"])
    assert any(i["kind"] == "joint" and i["model_group"] == RUNNING for i in sec["items"])
    slopes = pd.read_csv(tmp_path / "out" / "tables" / "learning_exposure_slopes.csv").set_index("group")
    # the same rows, fitted here directly: the answered mismatch-broken trials of each person, all blocks
    from analysis.stats.mixed import fit_glmer

    h = api.load_sessions(study)
    h = h[(h["group"] == HUMAN) & (h["attractor"] == "mismatch") & (h["agreement"] == "broken") & h["error"].notna()]
    direct = fit_glmer(pd.DataFrame({"error": h["error"].astype(int), "exposures": h["exposures"].astype(float),
                                     "subject": h["subject_key"].astype(str)}), "error ~ exposures + (1|subject)")
    assert slopes.loc[HUMAN, "estimate"] == pytest.approx(direct.coef("exposures")["estimate"], abs=1e-6)
    assert slopes.loc[HUMAN, "trials"] == len(h) and "--blocks all" in sec["text"]
    json.dumps(res, default=str)


def test_a_figure_never_drops_a_group_and_wraps_long_titles(monkeypatch, tmp_path):
    from analysis.report import design_figures as dfig

    groups = ["human"] + [f"SmolLM2-135M-Instruct · running · judgment:protocol{k}" for k in range(4)]
    t = pd.DataFrame([dict(group=g, answer=a, attractor=x, agreement=y, rate=0.5, lo=0.4, hi=0.6)
                      for g in groups for a in ("yes", "no") for x in ("match", "mismatch")
                      for y in ("intact", "broken")])
    shown = {}
    monkeypatch.setattr(dfig, "save_figure", lambda fig, path: shown.setdefault("fig", fig) and path)
    dfig.interaction_plot(t, ["attractor", "answer", "agreement"], "rate", "lo", "hi", "acceptance", tmp_path / "f.png")
    titles = [ax.get_title() for ax in shown["fig"].axes if ax.get_visible()]
    assert len(titles) == len(set(titles)) == 10  # 5 groups x 2 levels of agreement: every panel drawn
    assert sum("group = human" in x for x in titles) == 2
    assert all(len(line) <= dfig.TITLE_WIDTH for x in titles for line in x.split("\n"))


def test_a_one_label_model_group_gets_a_flag_on_its_demand_gap():
    from analysis.measures.demand_gap import demand_gaps

    rows = []
    for item in range(20):
        answer = "yes" if item % 2 else "no"
        for proto, said in (("judgment:direct", answer if item % 3 else ("no" if answer == "yes" else "yes")),
                            ("judgment:meta", "no")):
            rows.append({"subject_kind": "model", "model": "m", "context_mode": "none", "protocol": proto,
                         "item_id": f"{item}:a", "response": said, "correct_response": answer,
                         "correct": float(said == answer)})
    gp = demand_gaps(pd.DataFrame(rows), n_boot=20)
    assert len(gp) == 1 and "one label: judgment:meta answered 'no' on all 20 trials" in gp["flag"].iloc[0]


def test_the_sample_table_counts_training_apart_from_test_trials(df):
    from analysis.report.design import sample_table

    t = sample_table(df).set_index("group")
    assert t.loc[HUMAN, "test_trials"] == 6 * 24 and t.loc[HUMAN, "training_trials"] == 6 * 16
    assert t.loc[HUMAN, "test_items"] == 24  # the 16 training items are not counted as test items


def test_a_focus_naming_no_level_is_refused_before_any_work(study, tmp_path):
    from analysis.learning.general import FocusError

    with pytest.raises(FocusError, match="attractor has no level 'nope'; its levels are match, mismatch"):
        api.report(study, tmp_path / "out", mixed=False, focus="attractor=nope")
    assert not (tmp_path / "out").exists()


def test_validate_names_a_general_task_by_its_kind_not_a_key_response():
    from typer.testing import CliRunner

    from experiments.cli import app

    r = CliRunner().invoke(app, ["validate", "acceptability_yesno"])
    assert r.exit_code == 0, r.output
    assert "task=judgment" in r.output and "response=key" not in r.output
    assert "response=key" in CliRunner().invoke(app, ["validate", "lakretz2021_demo"]).output


def _lakretz_sample_rows():
    """The Lakretz sample imported and through the Lakretz row preparation (skip when ../shared is absent)."""
    import shutil
    import tempfile
    from pathlib import Path

    from analysis.load import load
    from analysis.options import Options
    from studies.lakretz2021.importers.release import import_lakretz2021
    from studies.lakretz2021.report import lakretz_rows
    from tests.reproductions.test_appendix_c import SAMPLE

    if not SAMPLE.exists():
        pytest.skip("../shared/data/lakretz2021_sample is not here")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table = SAMPLE / "dataframe_results_all_trials_sample.csv"
        subjects = set(pd.read_csv(table)["subject"])
        (tmp / "logs").mkdir()
        for p in (SAMPLE / "logs").iterdir():
            if any(f"_Subj_{s}_sess_" in p.name for s in subjects):
                shutil.copy(p, tmp / "logs" / p.name)
        import_lakretz2021(table, tmp / "logs", tmp / "imp")
        raw, info = load([tmp / "imp"], keep_outliers=True)
    return lakretz_rows(raw, info, Options(keep_outliers=True))


def _coefs(fit: dict) -> dict:
    return {f"{c['term']} {k}": c[k] for c in fit["coefficients"] for k in ("estimate", "se", "z", "p")}


@pytest.mark.long
def test_general_fits_on_the_lakretz_cells_give_figure_c2_and_tables_c2_c3(r_ready):
    """Fitted numbers, not only rows: the general exposure models on the paper's focus cell (Tables C2/C3:
    base, extended, their comparison) and the general per-cell base fits (Figure C2's slopes) equal the
    direct lme4 fits on the same rows (mixed.fit_glmer) and the Figure C2 slopes (appendix_c.fit_cell_slopes)."""
    from analysis.learning import general as ln
    from analysis.learning.exposures import BASE_FORMULA, extended_formula, fit_models_on
    from analysis.stats.mixed import fit_glmer
    from studies.lakretz2021.appendix_c import fit_cell_slopes

    r = _lakretz_sample_rows()
    focus = {"structure": "long_nested", "condition": "PSP", "violation_position": "inner"}
    data = ln.focus_data(r.od, LAKRETZ, focus)
    mine = fit_models_on(data[data["group"] == "human"].reset_index(drop=True), "human", ln.focus_text(focus))
    h = data[data["group"] == "human"].reset_index(drop=True)
    assert mine.base and mine.n_rows == len(h) > 0
    assert _coefs(mine.base) == pytest.approx(_coefs(fit_glmer(h, BASE_FORMULA).to_dict()), rel=1e-9, nan_ok=True)
    if mine.extended:
        assert _coefs(mine.extended) == pytest.approx(_coefs(fit_glmer(h, extended_formula(h)).to_dict()), rel=1e-9,
                                                      nan_ok=True)
    slopes, _ = fit_cell_slopes(r.od, "human", "long_nested")
    fitted = slopes[(slopes["condition"] != "all") & slopes["estimate"].notna()]
    assert len(fitted) >= 4
    for _, row in fitted.iterrows():
        cell = {"structure": "long_nested", "condition": row["condition"], "violation_position": row["violation_type"]}
        d = ln.focus_data(r.od, LAKRETZ, cell)
        d = d[(d["group"] == "human") & d["exposures"].notna()].reset_index(drop=True)
        assert len(d) == row["n_trials"]
        c = fit_glmer(d, BASE_FORMULA).coef("exposures")
        assert (c["estimate"], c["se"], c["p"]) == pytest.approx((row["estimate"], row["se"], row["p"]), rel=1e-9)
