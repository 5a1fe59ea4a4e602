"""`twinlab new NAME`: a study folder that validates as written, never written over without --force."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]


def twinlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_new_writes_a_study_that_validates_and_compiles(tmp_path):
    res = twinlab("new", "my_study", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    folder = tmp_path / "my_study"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "items.csv", "study.yaml"]
    exp = load_spec(str(folder / "study.yaml"))
    assert exp.name == "my_study" and exp.task.kind == "judgment"
    assert [b.name for b in exp.blocks] == ["practice", "test"] and not any(b.break_after for b in exp.blocks)
    # a Latin square over two lists: subjects 1 and 2 read each item once, in the other condition
    seqs = [compile_sequence(exp, f"S0{k}") for k in (1, 2)]
    cells = [{(t.item, t.factors) for t in s.trials if t.block == "test"} for s in seqs]
    assert len(cells[0]) == len(cells[1]) == 8 and not cells[0] & cells[1]
    assert {i for i, _ in cells[0]} == {i for i, _ in cells[1]} == {str(k) for k in range(1, 9)}
    assert len(seqs[0].trials) == 10  # 2 practice + 8 test
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for command in ("twinlab validate study.yaml", "twinlab web serve", "twinlab run-model", "twinlab analyze",
                    "twinlab power"):
        assert command in readme
    res = twinlab("validate", "study.yaml", cwd=folder)
    assert res.returncode == 0 and "8 items x 2 conditions" in res.stdout + res.stderr


def test_new_refuses_to_write_over_a_study_and_bad_names(tmp_path):
    assert twinlab("new", "s1", cwd=tmp_path).returncode == 0
    items = tmp_path / "s1" / "items.csv"
    items.write_text("my own items\n", encoding="utf-8")
    res = twinlab("new", "s1", cwd=tmp_path)
    assert res.returncode == 2 and "already has" in res.stderr and "--force" in res.stderr
    assert "Traceback" not in res.stderr and items.read_text(encoding="utf-8") == "my own items\n"
    res = twinlab("new", "s1", "--force", cwd=tmp_path)
    assert res.returncode == 0 and items.read_text(encoding="utf-8").startswith("item,agreement,role")
    for bad in ("my-study", "a b", "../up"):
        res = twinlab("new", bad, cwd=tmp_path)
        assert res.returncode == 2 and "letters, digits and _" in res.stderr, bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s1"]
    res = twinlab("new", "other", "--out", str(tmp_path / "elsewhere" / "x"), cwd=tmp_path)
    assert res.returncode == 0 and (tmp_path / "elsewhere" / "x" / "study.yaml").is_file()
    assert "name: other" in (tmp_path / "elsewhere" / "x" / "study.yaml").read_text(encoding="utf-8")
