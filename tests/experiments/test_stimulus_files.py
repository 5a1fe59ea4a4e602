"""Loading stimulus sets from CSV/TSV: round trip and one clear error per bad row."""
from __future__ import annotations

import pytest

from stimuli.files import StimulusFileError, load_items, save_items
from studies.lakretz2021.stimuli.generate import generate_items


def test_round_trip_csv_and_tsv(tmp_path):
    items = generate_items("long_nested", "test", 4) + generate_items("single", "test", 2)
    for name in ("s.csv", "s.tsv"):
        back = load_items(save_items(items, tmp_path / name))
        assert [(i.item_id, i.words, i.verbs) for i in back] == [(i.item_id, i.words, i.verbs) for i in items]


def test_bad_rows_are_listed_with_line_numbers(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text(
        "item_id,structure,condition,lexicon,sentence,inner_index,inner_alternative,outer_index,outer_alternative\n"
        "a1,long_nested,PSP,test,The boys that the girl near the men watches know the son.,8,watch,9,knows\n"
        "a2,long_nested,PXP,test,The boys run.,,,1,x\n"
        "a3,long_nested,PSP,test,The boys run.,7,x,,\n"
        "a1,long_nested,PSP,test,The boys run.,,,1,x\n"
        "a5,long_nested,PSP,test,The boys run.,,,,\n"
        "a6,long_nested,PSP,test,The boys run.,one,x,,\n"
    )
    with pytest.raises(StimulusFileError) as err:
        load_items(p)
    msg = str(err.value)
    assert "5 bad row(s)" in msg
    assert "line 3: condition 'PXP'" in msg
    assert "line 4: inner_index 7 is outside" in msg
    assert "line 5: item_id 'a1' appears twice" in msg
    assert "line 6: no inner_index/outer_index" in msg
    assert "line 7: inner_index 'one' is not an integer" in msg


def test_missing_column_and_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("item_id,structure,sentence\n1,a,b\n")
    with pytest.raises(StimulusFileError, match="missing column.*condition"):
        load_items(p)
    with pytest.raises(StimulusFileError, match="does not exist"):
        load_items(tmp_path / "none.csv")
