"""The spec hash covers a stimulus file's content, not its location."""
from __future__ import annotations

import shutil
from pathlib import Path

from experiments.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "experiments" / "specs" / "lakretz2021_italian_example.yaml"


def _copy_study(dest: Path) -> Path:
    """The spec and its stimulus file side by side in `dest` (the spec points at it relatively)."""
    exp = load_spec(SPEC)
    dest.mkdir(parents=True)
    shutil.copy(exp.stimuli.file, dest / "items.tsv")
    text = SPEC.read_text(encoding="utf-8")
    rel = [ln for ln in text.splitlines() if ln.strip().startswith("file:")]
    assert rel, "the example spec names its stimulus file"
    (dest / "spec.yaml").write_text(text.replace(rel[0].split("file:", 1)[1].strip(), "items.tsv"), encoding="utf-8")
    return dest / "spec.yaml"


def test_moving_a_study_folder_keeps_the_hash_and_editing_its_file_changes_it(tmp_path):
    a = load_spec(_copy_study(tmp_path / "lab_a"))
    b = load_spec(_copy_study(tmp_path / "elsewhere" / "lab_b"))
    assert a.stimuli.file != b.stimuli.file
    assert a.spec_hash == b.spec_hash == load_spec(SPEC).spec_hash

    items = tmp_path / "lab_a" / "items.tsv"
    lines = items.read_text(encoding="utf-8").splitlines(keepends=True)
    items.write_text("".join(lines[:-1]), encoding="utf-8")  # one item fewer
    assert load_spec(tmp_path / "lab_a" / "spec.yaml").spec_hash != b.spec_hash
