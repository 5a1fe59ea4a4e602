"""`design.lists: given`: each list's rows in the file's own order, practice and filler rows that name
a list belong to it alone; `lists: column` keeps its order (the file order of items) and its hashes."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.spec import SpecError, load_spec

ITEMS = """item,cond,role,list,sentence,answer
p1,,practice,1,Practice one.,yes
p2,,practice,2,Practice two.,no
3,b,test,1,Three b.,no
1,a,test,1,One a.,yes
2,b,test,1,Two b.,no
1,b,test,2,One b.,no
2,a,test,2,Two a.,yes
3,a,test,2,Three a.,yes
"""


def spec(tmp_path: Path, lists: str, items: str = ITEMS) -> Path:
    (tmp_path / "items.csv").write_text(items, encoding="utf-8")
    d = {"name": "given_demo", "seed": 1,
         "design": {"file": "items.csv", "factors": {"cond": ["a", "b"]}, "lists": lists},
         "blocks": [{"name": "practice", "role": "practice", "feedback": True, "shuffle": False},
                    {"name": "test", "role": "test", "feedback": False, "shuffle": False}],
         "task": {"kind": "judgment"}, "texts": {"instructions": ["x"]}}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(d), encoding="utf-8")
    return p


def test_given_lists_keep_each_lists_rows_in_file_order_with_their_own_practice(tmp_path):
    exp = load_spec(spec(tmp_path, "given"))
    one = compile_sequence(exp, "S1", list_number=1)
    two = compile_sequence(exp, "S1", list_number=2)
    assert [t.item_id for t in one] == ["p1", "3:b", "1:a", "2:b"]
    assert [t.item_id for t in two] == ["p2", "1:b", "2:a", "3:a"]
    assert one.design["mode"] == "given" and one.design["lists"] == 2


def test_column_lists_still_follow_the_file_order_of_items(tmp_path):
    exp = load_spec(spec(tmp_path, "column", ITEMS.replace("p2,,practice,2", "p2,,practice,")))
    assert [t.item_id for t in compile_sequence(exp, "S1", list_number=1) if t.role == "test"] == ["3:b", "1:a", "2:b"]
    assert [t.item_id for t in compile_sequence(exp, "S1", list_number=2) if t.role == "test"] == ["3:a", "1:b", "2:a"]
    assert [t.item_id for t in compile_sequence(exp, "S1", list_number=2) if t.role == "practice"] == ["p1", "p2"]


def test_given_lists_refuse_a_test_row_without_a_list(tmp_path):
    with pytest.raises(SpecError, match=r"line 4, column 4 \(list\)"):
        load_spec(spec(tmp_path, "given", ITEMS.replace("3,b,test,1", "3,b,test,")))
