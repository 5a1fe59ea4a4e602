"""Table 5 of seeds/003 (the phenomena of Experiments 3a/3b) as the reproduction produces it: the paper's rows
(checked against the seed text, character for character, when it is present) beside the counts read from
the files, with a hand count on the fixture and, when the release is present, all 36 rows agreeing."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reproductions.hu_levy.data import load_datasets
from reproductions.hu_levy.phenomena import PAPER_TABLE5, table5

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "data" / "hu_levy2023" / "datasets"
# ../shared beside the checkout (main), or the machine's shared folder (a worktree lies elsewhere)
SHARED = next((p for p in (ROOT.parent / "shared", Path("/work/shared")) if p.is_dir()), ROOT / "no-shared")
RELEASE = SHARED / "data" / "hu_levy2023" / "datasets"
SEEDS = sorted((SHARED / "seeds").glob("003_*.txt"))


@pytest.mark.skipif(not SEEDS, reason="the seed text of seeds/003 is not here")
def test_the_paper_rows_are_the_printed_table5():
    text = SEEDS[0].read_text(encoding="utf-8")
    printed = [ln.rstrip(" |").split(" | ") for ln in text.splitlines()
               if ln.startswith(("SyntaxGym | ", "BLiMP | "))]
    label = {"syntaxgym": "SyntaxGym", "blimp": "BLiMP"}
    assert [[label[d], name, str(n)] for d, _, name, n in PAPER_TABLE5] == printed
    assert len(printed) == 36


def test_fixture_counts_by_hand(tmp_path):
    t = table5(load_datasets(FIX, ("3a", "3b")))
    by = t.set_index("release_value")
    # tests/data/hu_levy2023/datasets/exp3: SyntaxGym 2 center_embed, 2 number_orc, 2 number_prep; BLiMP 2 of
    # subject_verb_agreement and one each of four more
    assert by.loc["center_embed", "items_in_file"] == 2 and by.loc["number_prep", "items_in_file"] == 2
    assert by.loc["subject_verb_agreement", "items_in_file"] == 2 and by.loc["binding", "items_in_file"] == 0
    assert t["items_in_file"].sum() == 12 and not t["agrees"].any() and len(t) == 36
    # a phenomenon the paper does not print is a row of its own, flagged; --items counts what ran
    data = tmp_path / "datasets"
    shutil.copytree(FIX, data)
    f = data / "exp3" / "blimp" / "corpus.csv"
    f.write_text(f.read_text(encoding="utf-8").replace("subject_verb_agreement", "made_up_phenomenon", 1),
                 encoding="utf-8")
    t = table5(load_datasets(data, ("3a",), n_items=3, seed=1))
    extra = t[t["release_value"] == "made_up_phenomenon"].iloc[0]
    assert extra["phenomenon"] == "(not in the paper's Table 5)" and not extra["agrees"] and extra["paper_items"] == 0
    assert t["items_run"].sum() == 6 and t["items_in_file"].sum() == 12
    assert table5(load_datasets(FIX, ("1", "2"))).empty


@pytest.mark.skipif(not RELEASE.is_dir(), reason="the authors' release is not here")
def test_release_agrees_with_every_row():
    t = table5(load_datasets(RELEASE, ("3a", "3b")))
    assert len(t) == 36 and t["agrees"].all()
    assert (t.loc[t["dataset"] == "SyntaxGym", "items_in_file"] == 15).all()
    assert (t.loc[t["dataset"] == "BLiMP", "items_in_file"] == 30).all()
