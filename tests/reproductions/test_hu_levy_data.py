"""The authors' datasets/ folder: read as released, checked (file and line named, exit 2), sampled with a seed."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from reproductions.common import ReproError
from reproductions.hu_levy.data import DATASETS, load_datasets, read_corpus

FIX = Path(__file__).parent.parent / "data" / "hu_levy2023" / "datasets"
REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "hu_levy2023" / "datasets"
if not REAL.exists():
    REAL = Path("/work/shared/data/hu_levy2023/datasets")


def flat(res) -> str:
    return " ".join(res.output.split())


def copy(tmp_path: Path) -> Path:
    d = tmp_path / "datasets"
    shutil.copytree(FIX, d)
    return d


def test_fixture_folder_reads_with_every_field():
    ds = {d.spec.name: d for d in load_datasets(FIX)}
    assert list(ds) == ["p18", "news", "dtfit", "syntaxgym", "blimp"]
    assert [len(d.items) for d in ds.values()] == [6, 4, 6, 6, 6]
    b = ds["p18"].items[0]
    assert (b.item_id, b.line, b.prefix, b.continuation) == ("1", 2, "A butterfly is a flying insect with four large",
                                                            "wings")
    a = ds["dtfit"].items[0]
    assert (a.prefix, a.continuation, a.bad_continuation) == ("The archer released the", "arrow", "interview")
    s = ds["syntaxgym"].items[2]
    assert (s.good_sentence, s.bad_sentence, s.group) == ("The author that the guards like laughs.",
                                                          "The author that the guards like laugh.", "number_orc")
    # the News fixture repeats an article's text under another id, as the release does: kept and reported
    assert any("line 5 repeats the prefix, continuation of line 4" in n for n in ds["news"].notes)
    assert any("4 items; the paper used 222" in n for n in ds["news"].notes)


def test_sample_is_seeded_in_file_order_and_per_dataset():
    a = {d.spec.name: [i.item_id for i in d.items] for d in load_datasets(FIX, n_items=3, seed=7)}
    b = {d.spec.name: [i.item_id for i in d.items] for d in load_datasets(FIX, n_items=3, seed=7)}
    c = {d.spec.name: [i.item_id for i in d.items] for d in load_datasets(FIX, n_items=3, seed=8)}
    assert a == b and a != c
    assert all(len(v) == 3 and v == sorted(v, key=int) for v in a.values())
    assert {d.spec.name for d in load_datasets(FIX, experiments=("2",))} == {"dtfit"}


@pytest.mark.parametrize("path,edit,expected", [
    ("exp1/p18/corpus.csv", lambda t: t.replace("item_id,prefix,continuation", "item_id,prefix,word"),
     "exp1/p18/corpus.csv: line 1: missing column(s) continuation"),
    ("exp2/dtfit/corpus.csv", lambda t: t.replace("4,The student", "2,The student"),
     "exp2/dtfit/corpus.csv: 1 bad row(s) line 5: item_id 2 already on line 3"),
    ("exp3/blimp/corpus.csv", lambda t: t.replace("The dogs bark.,", ","),
     "exp3/blimp/corpus.csv: 1 bad row(s) line 3: empty good_sentence"),
    ("exp3/syntaxgym/corpus.csv", lambda t: t.replace(",center_embed,plaus,implaus,2,2", ",center_embed,plaus,2,2"),
     "exp3/syntaxgym/corpus.csv: 1 bad row(s) line 3: 6 fields, the header has 7"),
    ("exp2/dtfit/corpus.csv", lambda t: t.replace("plane,sandwich", "plane,plane"),
     "line 4: good_continuation and bad_continuation are the same"),
    ("exp1/news/corpus.csv", lambda t: t.encode("utf-8").replace(b"Saturday", b"S\xe1turday"),
     "exp1/news/corpus.csv: line 3, column"),
])
def test_bad_files_are_named_with_the_line_and_exit_2_before_a_model_loads(tmp_path, path, edit, expected):
    d = copy(tmp_path)
    f = d / path
    new = edit(f.read_text(encoding="utf-8"))
    f.write_bytes(new if isinstance(new, bytes) else new.encode("utf-8"))
    with pytest.raises(ReproError) as err:
        load_datasets(d)
    assert expected in " ".join(str(err.value).split())
    loaded = "torch" in sys.modules
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(d), "--out", str(tmp_path / "o"), "-q"])
    assert res.exit_code == 2 and expected in flat(res) and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()
    assert loaded or "torch" not in sys.modules


def test_a_missing_file_or_folder_is_named(tmp_path):
    d = copy(tmp_path)
    (d / "exp3" / "syntaxgym" / "corpus.csv").unlink()
    with pytest.raises(ReproError, match="exp3/syntaxgym/corpus.csv is missing"):
        load_datasets(d)
    assert len(load_datasets(d, experiments=("1", "2"))) == 3  # experiments that do not need it still run
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(tmp_path / "nope"), "--out",
                                   str(tmp_path / "o")])
    assert res.exit_code == 2 and "no such folder" in flat(res)
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "give --data DIR" in flat(res)
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(d), "-e", "1,4", "--out",
                                   str(tmp_path / "o")])
    assert res.exit_code == 2 and "--experiments: unknown 4" in flat(res)
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(d), "--items", "0", "--out",
                                   str(tmp_path / "o")])
    assert res.exit_code == 2 and "--items must be from 1" in flat(res)


@pytest.mark.skipif(not REAL.exists(), reason="the authors' datasets are not in ../shared")
def test_the_release_reads_with_the_papers_counts():
    ds = {d.spec.name: d for d in load_datasets(REAL)}
    assert {k: len(d.items) for k, d in ds.items()} == {s.name: s.paper_count for s in DATASETS}
    assert {k: d.all_count for k, d in ds.items()} == {"p18": 384, "news": 222, "dtfit": 395, "syntaxgym": 345,
                                                       "blimp": 390}
    for name, n_groups, per in (("syntaxgym", 23, 15), ("blimp", 13, 30)):
        groups = [it.group for it in ds[name].items]
        assert len(set(groups)) == n_groups and all(groups.count(g) == per for g in set(groups))
    # the News corpus's repeated article (items 47-49) is reported, not dropped
    assert [n for n in ds["news"].notes if "repeats" in n] == [
        "exp1/news/corpus.csv: line 49 repeats the prefix, continuation of line 48 (kept, as in the paper)",
        "exp1/news/corpus.csv: line 50 repeats the prefix, continuation of line 48 (kept, as in the paper)"]
    assert len([n for n in ds["syntaxgym"].notes if "repeats the good_sentence, bad_sentence" in n]) == 7
    items, _, _ = read_corpus(DATASETS[0], REAL / "exp1" / "p18" / "corpus.csv")
    assert items[1].prefix == "One accordion keyboard is used for individual notes, the other for"
