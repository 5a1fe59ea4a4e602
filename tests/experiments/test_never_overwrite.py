"""No command replaces an existing file without --force, --force never writes over an
input of the same command or a recorded session, and outputs appear whole (temporary name, renamed).
Every case runs the real `twinlab` command."""
from __future__ import annotations

import shutil
from pathlib import Path

from cli_refusal import refused, tree, twinlab

from experiments.atomic import write_atomically
from experiments.spec import bundled_spec_path

DATA = Path(__file__).parent.parent / "data" / "lakretz_text"


def recorded_session(root: Path) -> Path:
    """A finished session of two trials written by the real session writer (its table path)."""
    from test_validation import human_session

    return human_session(root, "S1", 2)


def test_plan_out_never_replaces_a_session_table_even_with_force(tmp_path):
    table = recorded_session(tmp_path)
    before = tree(tmp_path)
    for extra in ([], ["--force"]):
        refused("plan", "lakretz2021_nested", "-s", "S1", "--out", str(table), *extra,
                match=["--out", table.name, "recorded session's data file"])
        refused("plan", "lakretz2021_nested", "-s", "S1", "--out", str(table.with_suffix(".json")), *extra,
                match="recorded session's data file")
    assert tree(tmp_path) == before


def test_plan_out_onto_an_existing_file_needs_force_and_never_its_spec(tmp_path):
    out = tmp_path / "plan.csv"
    out.write_text("keep me\n")
    refused("plan", "lakretz2021_nested", "-s", "S1", "--out", str(out), match="exists; choose another file or pass "
                                                                               "--force")
    assert out.read_text() == "keep me\n"
    r = twinlab("plan", "lakretz2021_nested", "-s", "S1", "--out", str(out), "--force")
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("subject_id,spec_hash,sequence_hash")
    spec = tmp_path / "spec.yaml"
    shutil.copy(bundled_spec_path("lakretz2021_nested"), spec)
    text = spec.read_bytes()
    refused("plan", str(spec), "-s", "S1", "--out", str(spec), "--force", match="is the command's own input (the spec)")
    link = tmp_path / "alias.yaml"
    link.symlink_to(spec)
    refused("plan", str(spec), "-s", "S1", "--out", str(link), "--force", match="own input (the spec)")
    assert spec.read_bytes() == text
    assert not [p for p in tmp_path.iterdir() if ".part" in p.name]


def test_stimuli_generate_never_replaces_without_force(tmp_path):
    out = tmp_path / "items.tsv"
    out.write_text("mine\n")
    refused("stimuli", "generate", "--out", str(out), "--per-condition", "2", match=["--out", "items.tsv", "exists"])
    assert out.read_text() == "mine\n"
    r = twinlab("stimuli", "generate", "--out", str(out), "--per-condition", "2", "--force")
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("item_id\tstructure")  # TSV by the target's suffix, written whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.tsv"]


def test_lakretz_text_force_never_writes_over_its_own_input(tmp_path):
    text, gold = tmp_path / "nested.text", tmp_path / "nested.gold"
    src_text = next(DATA.glob("*.text"))
    shutil.copy(src_text, text)
    shutil.copy(src_text.with_suffix(".gold"), gold)
    before = tree(tmp_path)
    for target, what in ((text, "the .text file"), (gold, "the --gold file")):
        refused("stimuli", "import", "lakretz-text", str(text), "--gold", str(gold), "--out", str(target), "--force",
                match=f"is the command's own input ({what})")
    refused("stimuli", "import", "lakretz-text", str(text), "--gold", str(gold), "--out",
            str(tmp_path / "." / "nested.gold"), "--force", match="own input")
    assert tree(tmp_path) == before
    out = tmp_path / "items.csv"
    assert twinlab("stimuli", "import", "lakretz-text", str(text), "--gold", str(gold),
                   "--out", str(out)).returncode == 0
    refused("stimuli", "import", "lakretz-text", str(text), "--gold", str(gold), "--out", str(out), match="exists")


def test_write_atomically_leaves_the_old_file_when_the_writer_fails(tmp_path):
    out = tmp_path / "report.csv"
    out.write_text("old\n")

    def half(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    try:
        write_atomically(out, half)
    except OSError:
        pass
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["report.csv"]
    write_atomically(out, lambda tmp: tmp.write_text("new\n"))
    assert out.read_text() == "new\n" and (out.stat().st_mode & 0o777) != 0o600


# ---- analyze ---------------------------------------------------------------------------------
REPO = Path(__file__).resolve().parents[2]
# the results table in the release's exact format, shipped with the tests (a fresh clone has no ../shared)
SAMPLE = REPO / "tests" / "fixtures" / "lakretz2021" / "dataframe_results_all_trials.csv"


def test_analyze_replaces_earlier_results_only_with_force_and_never_among_its_data(tmp_path):
    out = tmp_path / "results"
    args = ("analyze", str(SAMPLE), "--out", str(out), "--no-mixed", "--n-boot", "20")
    r = twinlab(*args)
    assert r.returncode == 0, r.stderr
    first = tree(out)
    assert "results.json" in first and not [n for n in first if ".part" in n]
    refused(*args, match=["--out", "holds the results of an earlier analysis", "--force"])
    assert tree(out) == first
    r = twinlab(*args, "--force")
    assert r.returncode == 0, r.stderr
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLE, data / SAMPLE.name)
    before = tree(data)
    refused("analyze", str(data / SAMPLE.name), "--out", str(data), "--no-mixed", "--force",
            match="holds the data analysed")
    refused("analyze", str(data), "--out", str(data), "--no-mixed", "--force", match="holds the data analysed")
    assert tree(data) == before


def test_analyze_on_a_full_disk_is_one_line(tmp_path, monkeypatch):
    """A full disk cannot be made here (no tmpfs to mount), so the write fails in-process; the real
    writes are exercised by the test above."""
    import errno

    import pandas as pd
    from typer.testing import CliRunner

    from experiments.cli import app

    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(a[0]) if a else None)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    out = tmp_path / "results"
    r = CliRunner().invoke(app, ["analyze", str(SAMPLE), "--out", str(out), "--no-mixed", "--n-boot", "20"])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    text = " ".join(r.output.split())
    assert "cannot write" in text and "No space left on device" in text and "Traceback" not in r.output
    assert not [p for p in out.rglob("*") if p.is_file()]  # no half-written table left behind


def test_analyze_header_only_results_file(tmp_path):
    f = tmp_path / "results.csv"
    f.write_text(SAMPLE.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    refused("analyze", str(f), "--out", str(tmp_path / "o"), "--no-mixed", match=["no trials to "
                                                                                  "analyse", "results.csv"])
    assert not (tmp_path / "o" / "results.json").exists()
