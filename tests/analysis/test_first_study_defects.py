"""What a newcomer's first study met: a pause nobody asked for, a boolean-looking factor `--focus` could not
name, and merged model copies whose order columns ran past the block's length."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from analysis import api
from experiments.screen_texts import screen_texts
from experiments.spec import load_spec
from tests.support import measures_synthetic as ms
from tests.support.design_synthetic import agreement_judgments

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "experiments" / "specs"


def _own_study(tmp_path: Path, blocks: list[dict]) -> Path:
    """The bundled yes/no study as a newcomer's own: its items, their blocks (no `break_after` given)."""
    spec = yaml.safe_load((SPECS / "acceptability_yesno.yaml").read_text(encoding="utf-8"))
    (tmp_path / "items.csv").write_bytes((SPECS / "acceptability_yesno_items.csv").read_bytes())
    spec["design"]["file"] = "items.csv"
    spec["blocks"] = blocks
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def test_no_pause_after_a_block_unless_asked(tmp_path):
    exp = load_spec(_own_study(tmp_path, [{"name": "training", "role": "practice", "feedback": True},
                                          {"name": "test", "role": "test", "feedback": False}]))
    assert [b.break_after for b in exp.blocks] == [False, False]
    asked = load_spec(_own_study(tmp_path, [{"name": "training", "role": "practice", "break_after": True},
                                            {"name": "test", "role": "test"}]))
    assert [b.break_after for b in asked.blocks] == [True, False]
    # the pause names the key that ends it (the continue key, SPACE by default), never "the response key"
    assert screen_texts(asked)["break_text"] == "Take a short break. Press SPACE to continue."


def test_the_lakretz_study_keeps_its_pauses_and_every_bundled_spec_its_hash():
    nested = load_spec(SPECS / "lakretz2021_nested.yaml")
    assert nested.blocks[0].break_after is True  # the study declares pauses by default (SPEC_DEFAULTS)
    # tests/experiments/test_trial_golden_all_specs.py pins every bundled spec's hash; the one-block specs hash as
    # before
    assert load_spec(SPECS / "cloze.yaml").spec_hash == "28faf36cd6474477"


def test_focus_names_a_boolean_factor_in_its_declared_form(tmp_path):
    agreement_judgments(tmp_path / "people", n_subjects=4, n_items=16)
    for focus in ("grammatical=false", "grammatical=False"):
        out = tmp_path / f"out-{focus}"
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "analyze", str(tmp_path / "people"),
                            "--out", str(out), "--no-mixed", "--n-boot", "50", "--focus", focus],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr + r.stdout
        cells = pd.read_csv(out / "tables" / "design_cells.csv", dtype=str)
        assert set(cells["grammatical"]) == {"true", "false"}  # as declared, never True/False
        by_hand = pd.concat(pd.read_csv(p, dtype=str) for p in (tmp_path / "people" / "data").glob("*.csv"))
        assert int(cells["trials"].astype(int).sum()) == len(by_hand)


def test_merged_copies_keep_order_columns_within_the_block(tmp_path):
    """Four deterministic sessions, two per list: each list's two are one subject; positions stay 1..16."""
    ms.judgment_sessions(tmp_path, n_subjects=4, meta=ms.model_meta("none"))
    ms.judgment_sessions(tmp_path, n_subjects=4, meta=ms.model_meta("none"), prefix="N")
    d = api.load_sessions(tmp_path)
    assert d["subject_key"].nunique() == 4
    assert d["trial_position"].max() == 16 and d["exposures"].max() <= 15
    for _, x in d.groupby("subject_key"):
        assert sorted(x["trial_position"].astype(int)) == list(range(1, 17))


def test_learning_section_says_its_rows_and_shows_its_figure_before_a_long_table(tmp_path):
    from tests.support.learning_synthetic import learning_study

    root = learning_study(tmp_path / "study", n_people=3, n_running=2, n_static=1)
    out = tmp_path / "out"
    res = api.report(root, out, blocks="all", mixed=False, n_boot=50, show_progress=False)
    curves = next(s for s in res["sections"] if s["id"] == "learning_curves")
    assert "--blocks training,test" not in curves["text"] and "Rows (--blocks all)" in curves["text"]
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index("id='learning_curves'"):]
    section = section[:section.index("<h2", 10)] if "<h2" in section[10:] else section
    long_table = len(pd.read_csv(out / "tables" / "learning_curves.csv")) > 20
    assert long_table and section.index("<figure>") < section.index("<table")
