"""New files add sessions without rewriting the earlier ones (`twinlab import ... --add`, docs/import.md).

A new person is a new list of the design read from the data, so the spec hash changes: without an option the
import refuses (nothing written); `--add` writes the new people's sessions under the extended spec and leaves
every earlier session byte for byte (checked: its person's trials compile to the same trials under both
specs), keeping the earlier spec loadable in OUT/spec/versions/<hash>/.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from participants.imports.api import import_study
from participants.imports.records import ImportInputError

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "imports" / "jspsych"


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith("import_")}


def files(*people: str) -> list[Path]:
    return [DATA / f"{p}.csv" for p in people]


def test_new_files_add_sessions_and_leave_earlier_ones_byte_for_byte(tmp_path):
    out = tmp_path / "out"
    first = import_study("jspsych", files("s01", "s03"), None, out, spec_out=tmp_path / "pilot.yaml")
    before = tree(out)
    with pytest.raises(ImportInputError, match="give --add"):
        import_study("jspsych", files("s01", "s02", "s03"), None, out, spec_out=tmp_path / "pilot.yaml")
    assert tree(out) == before
    report = import_study("jspsych", files("s01", "s02", "s03"), None, out, spec_out=tmp_path / "pilot.yaml",
                          add=True)
    after = tree(out)
    assert report.sessions == {"new": 1, "unchanged": 0, "replaced": 0, "kept": 2}
    assert report.spec_hash != first.spec_hash
    earlier = [k for k in before if k.startswith("data/study-pilot_subject-")]
    assert len(earlier) == 4 and all(after[k] == before[k] for k in earlier)   # byte for byte
    old = load_spec(out / "spec" / "versions" / first.spec_hash / "pilot.yaml")
    new = load_spec(tmp_path / "pilot.yaml")
    assert old.spec_hash == first.spec_hash and new.spec_hash == report.spec_hash
    for sid, k in (("s01", 1), ("s03", 2)):   # earlier people keep their lists; s02 comes after them
        a, b = compile_sequence(old, sid, list_number=k), compile_sequence(new, sid, list_number=k)
        assert [t.hashed_dict() for t in a] == [t.hashed_dict() for t in b] and len(a) == 14
    s02 = compile_sequence(new, "s02", list_number=3)
    assert [t.item for t in s02 if t.role == "test"][0] == "i1"   # s02's own first test item (its file's order)
    again = import_study("jspsych", files("s01", "s02", "s03"), None, out, spec_out=tmp_path / "pilot.yaml", add=True)
    assert again.sessions == {"new": 0, "unchanged": 1, "replaced": 0, "kept": 2} and tree(out) == after


def test_add_refuses_what_cannot_stay_and_names_it(tmp_path):
    out = tmp_path / "out"
    import_study("jspsych", files("s01", "s03"), None, out)
    before = tree(out)
    with pytest.raises(ImportInputError, match=r"earlier imported participant\(s\) \(s03\) are not in the files"):
        import_study("jspsych", files("s01", "s02"), None, out, add=True)
    changed = tmp_path / "s01.csv"
    shutil.copy(DATA / "s01.csv", changed)
    with open(changed, "a", encoding="utf-8") as f:
        f.write("\n")
    with pytest.raises(ImportInputError, match="subject-s01.*cannot stay: its source files differ"):
        import_study("jspsych", [changed, *files("s02", "s03")], None, out, add=True)
    with pytest.raises(ImportInputError, match="--add and --force: give one"):
        import_study("jspsych", files("s01", "s02", "s03"), None, out, add=True, force=True)
    assert tree(out) == before
