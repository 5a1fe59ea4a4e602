"""Every kind folder has a bundled example spec that `twinlab validate` accepts (a newcomer copies one to start
a study of that kind), and `validate` of a `lists: given` design says the file's own lists, not an
items x conditions count the file does not have."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from experiments.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "experiments" / "specs"


def twinlab(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)


def kind_folders() -> list[str]:
    # a folder named with a leading underscore (the copyable template) is no registered kind
    return sorted(p.name for p in (ROOT / "kinds").iterdir()
                  if (p / "task.py").is_file() and not p.name.startswith("_"))


def test_every_kind_folder_has_a_bundled_example_that_validates():
    by_kind: dict[str, list[str]] = {}
    for path in sorted(SPECS.glob("*.yaml")):
        kind = (yaml.safe_load(path.read_text(encoding="utf-8")).get("task") or {}).get("kind")
        by_kind.setdefault(kind, []).append(path.stem)
    kinds = kind_folders()
    assert len(kinds) >= 9 and "maze" in kinds
    missing = [k for k in kinds if k not in by_kind]
    assert not missing, f"kinds without a bundled example spec: {missing}"
    for kind in kinds:
        name = by_kind[kind][0]
        r = twinlab("validate", name)
        assert r.returncode == 0 and r.stdout.startswith(f"OK {name} "), (kind, r.stderr)
        assert load_spec(name).task.kind == kind


def test_the_maze_example_is_a_latin_square_of_eight_items():
    exp = load_spec("maze")
    r = twinlab("validate", "maze")
    assert "8 items x 2 conditions (16 test rows)" in r.stderr, r.stderr
    assert exp.task.settings().option_keys == ["e", "i"]


def dative_design(tmp_path: Path) -> Path:
    """van Schijndel & Linzen's datives: list 1 reads 20 DO adaptation sentences, list 2 20 PO, then both read
    the same 10 DO and 10 PO test sentences."""
    rows = ["item,structure,role,list,sentence"]
    for ln, structure in ((1, "DO"), (2, "PO")):
        for i in range(1, 21):
            s = f"The coach gave the player{i} a ball." if structure == "DO" else \
                f"The coach gave a ball to the player{i}."
            rows.append(f"a{ln}_{i},{structure},practice,{ln},{s}")
    for ln in (1, 2):
        for i in range(1, 21):
            structure = "DO" if i <= 10 else "PO"
            s = f"The nurse sent the doctor{i} a note." if structure == "DO" else \
                f"The nurse sent a note to the doctor{i}."
            rows.append(f"t{i},{structure},test,{ln},{s}")
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    spec = {"name": "datives", "seed": 1,
            "design": {"file": "items.csv", "factors": {"structure": ["DO", "PO"]}, "lists": "given"},
            "blocks": [{"name": "adaptation", "role": "practice", "feedback": False, "break_after": False},
                       {"name": "test", "role": "test", "feedback": False}],
            "task": {"kind": "self_paced_reading"}, "texts": {"instructions": ["Read each sentence."]}}
    p = tmp_path / "datives.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return p


def test_validate_of_given_lists_says_each_lists_real_rows(tmp_path):
    r = twinlab("validate", str(dative_design(tmp_path)))
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stderr.split())
    assert "x 2 conditions" not in out
    assert "40 test rows of 20 items" in out and "40 practice rows" in out, out
    assert "list 1: 20 test rows (DO 10, PO 10), 20 practice (DO 20)" in out, out
    assert "list 2: 20 test rows (DO 10, PO 10), 20 practice (PO 20)" in out, out
