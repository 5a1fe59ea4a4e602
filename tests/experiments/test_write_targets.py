"""Everything written goes only where it was asked: a regular file under the output, never through a
symbolic link, never over a device, FIFO or socket (not even with --force), never into a folder the same command
reads (experiments/outputs.py, the rename target checked again in experiments/atomic.py).

Real files in tmp_path. A FIFO stands for a device in the refusals that would replace it if they failed (a test
must never risk the machine's /dev/null); /dev/null itself is only examined. The command refusals run the real
`twinlab` (exit 2, one line, nothing written).
"""
from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from experiments.atomic import UnsafeTargetError, atomic_write_text, write_atomically
from experiments.options import OptionError
from experiments.outputs import check_dataset_folder, check_output_file, check_output_folder, unsafe_target
from tests.cli_refusal import refused, tree

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from twins_people import write_people  # noqa: E402

SPEC = "acceptability_yesno"


def _outside(tmp_path: Path) -> Path:
    """A folder outside every output, with a file a link could reach."""
    d = tmp_path / "elsewhere"
    d.mkdir()
    (d / "keep.csv").write_text("precious\n", encoding="utf-8")
    return d


# ---- the rule, on its own ----------------------------------------------------------------------------------
def test_only_an_absent_path_or_a_regular_file_may_be_written(tmp_path):
    assert unsafe_target(tmp_path / "new.csv") is None
    (tmp_path / "plain.csv").write_text("x\n")
    assert unsafe_target(tmp_path / "plain.csv") is None
    (tmp_path / "link.csv").symlink_to(tmp_path / "plain.csv")
    assert "symbolic link (to " in unsafe_target(tmp_path / "link.csv")
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "nowhere.csv")  # a rename would replace the link itself
    assert "symbolic link" in unsafe_target(tmp_path / "dangling.csv")
    os.mkfifo(tmp_path / "pipe")
    assert "a FIFO (named pipe)" in unsafe_target(tmp_path / "pipe")
    assert "a character device" in unsafe_target("/dev/null")  # examined only, never written
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "sock"))
        assert "a socket" in unsafe_target(tmp_path / "sock")
    assert "a folder" in unsafe_target(tmp_path)
    assert unsafe_target(tmp_path, folder=True) is None
    (tmp_path / "dirlink").symlink_to(tmp_path)
    assert "symbolic link" in unsafe_target(tmp_path / "dirlink", folder=True)


def test_an_atomic_write_never_replaces_a_link_or_a_fifo(tmp_path):
    out = _outside(tmp_path)
    link = tmp_path / "report.html"
    link.symlink_to(out / "keep.csv")
    with pytest.raises(UnsafeTargetError, match="symbolic link"):
        atomic_write_text(link, "new")
    assert link.is_symlink() and (out / "keep.csv").read_text() == "precious\n"
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(UnsafeTargetError, match="FIFO"):
        atomic_write_text(tmp_path / "pipe.csv", "new")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.csv").st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary was left behind"
    atomic_write_text(tmp_path / "fine.csv", "ok")  # a plain target is still written
    assert (tmp_path / "fine.csv").read_text() == "ok"


def test_the_rename_target_is_checked_again_just_before_the_rename(tmp_path):
    """A link put in place while the file was being written is refused, not replaced (os.replace over a link
    replaces the link; over a device node, the device)."""
    out = _outside(tmp_path)
    target = tmp_path / "table.csv"

    def write(tmp: Path) -> None:
        tmp.write_text("rows\n")
        target.symlink_to(out / "keep.csv")  # appears during the write

    with pytest.raises(UnsafeTargetError, match="symbolic link"):
        write_atomically(target, write)
    assert target.is_symlink() and (out / "keep.csv").read_text() == "precious\n"
    assert not [p for p in tmp_path.iterdir() if ".part" in p.name]


def test_an_output_file_is_never_a_device_a_link_or_inside_an_input_folder_even_with_force(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OptionError, match="FIFO.*never written over, even with --force"):
        check_output_file("--out", tmp_path / "pipe", force=True)
    with pytest.raises(OptionError, match="character device"):
        check_output_file("--out", Path("/dev/null"), force=True)  # refused before anything is written
    people = tmp_path / "people"
    (people / "data").mkdir(parents=True)
    with pytest.raises(OptionError, match="inside the people's folder"):
        check_output_file("--out", people / "data" / "x.jsonl", True, input_folders=[("the people's folder", people)])
    check_output_file("--out", tmp_path / "x.jsonl", True, input_folders=[("the people's folder", people)])


def test_an_output_folder_holds_no_link_or_device_in_what_it_writes(tmp_path):
    outside = _outside(tmp_path)
    out = tmp_path / "results"
    (out / "figures").mkdir(parents=True)
    (out / "tables").symlink_to(outside)
    with pytest.raises(OptionError, match=r"results/tables is a symbolic link"):
        check_output_folder("--out", out, ("tables", "figures"))
    (out / "tables").unlink()
    (out / "tables").mkdir()
    (out / "tables" / "summary.csv").symlink_to(outside / "keep.csv")
    with pytest.raises(OptionError, match=r"tables/summary.csv is a symbolic link"):
        check_output_folder("--out", out, ("tables", "figures"))
    (out / "tables" / "summary.csv").unlink()
    os.mkfifo(out / "figures" / "a.png")
    with pytest.raises(OptionError, match=r"figures/a.png is a FIFO"):
        check_output_folder("--out", out, ("tables", "figures"))
    (out / "figures" / "a.png").unlink()
    (out / "power.json").symlink_to(outside / "keep.csv")
    with pytest.raises(OptionError, match=r"power.json is a symbolic link"):
        check_output_folder("--out", out, ("tables", "figures"), ("power.json",))
    (out / "power.json").unlink()
    check_output_folder("--out", out, ("tables", "figures"), ("power.json",))
    # --out itself may be a link the user made (they named it); what is inside it may not
    alias = tmp_path / "alias"
    alias.symlink_to(out)
    check_output_folder("--out", alias, ("tables", "figures"))
    # a session folder's data/, nested arbitrarily deep
    (out / "data" / "deep").mkdir(parents=True)
    (out / "data" / "deep" / "x_data.csv").symlink_to(outside / "keep.csv")
    with pytest.raises(OptionError, match=r"deep/x_data.csv is a symbolic link"):
        check_dataset_folder("--out", out)
    assert (outside / "keep.csv").read_text() == "precious\n"


def test_an_output_folder_never_overlaps_a_folder_the_command_reads(tmp_path):
    people = tmp_path / "people"
    (people / "data").mkdir(parents=True)
    for out in (people, people / "models", people / "data"):
        with pytest.raises(OptionError, match="which this command reads"):
            check_dataset_folder("--out", out, [("the --replay folder", people)])
    with pytest.raises(OptionError, match="its data/ folder holds the --replay folder"):
        check_dataset_folder("--out", tmp_path / "all", [("the --replay folder", tmp_path / "all" / "data" / "p")])
    check_dataset_folder("--out", tmp_path / "models", [("the --replay folder", people)])


def test_a_session_is_never_appended_through_a_link(tmp_path):
    from experiments.design_compiler import compile_sequence
    from experiments.session import SessionError, SessionWriter, session_paths
    from experiments.spec import load_spec

    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "P01")
    outside = _outside(tmp_path)
    csv_path, _ = session_paths(tmp_path / "s", exp.name, "P01", 1)
    csv_path.parent.mkdir(parents=True)
    csv_path.symlink_to(outside / "keep.csv")
    with pytest.raises(SessionError, match="symbolic link"):
        SessionWriter.create(tmp_path / "s", experiment=exp.name, subject_id="P01", session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq), resume=True)
    assert (outside / "keep.csv").read_text() == "precious\n"


# ---- the commands ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def people(tmp_path_factory) -> Path:
    from experiments.spec import load_spec

    root = tmp_path_factory.mktemp("people_out") / "people"
    write_people(load_spec(SPEC), root, ["P01"])
    return root


def test_people_jsonl_writes_only_a_regular_file_outside_the_peoples_folder(people, tmp_path):
    before = tree(people)
    os.mkfifo(tmp_path / "pipe")
    refused("people-jsonl", SPEC, str(people), "--out", str(tmp_path / "pipe"), "--force",
            match=["--out", "is a FIFO (named pipe)", "even with --force"])
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    refused("people-jsonl", SPEC, str(people), "--out", str(people / "data" / "x.jsonl"),
            match="is inside the people's folder")
    sidecar = next((people / "data").glob("*_data.json"))
    refused("people-jsonl", SPEC, str(people), "--out", str(sidecar), "--force", match="is inside the people's folder")
    refused("people-jsonl", SPEC, str(people), "--out", str(tmp_path), match="is a folder; give a file name")
    link = tmp_path / "t.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    refused("people-jsonl", SPEC, str(people), "--out", str(link), "--force", match="is a symbolic link")
    assert tree(people) == before and not (tmp_path / "elsewhere.jsonl").exists()


def test_a_replay_never_writes_into_the_peoples_folder(people, tmp_path):
    before = tree(people)
    refused("run-model", SPEC, "--replay", str(people), "--out", str(people), match="which this command reads")
    refused("run-model", SPEC, "--replay", str(people), "--out", str(people / "models"),
            match="which this command reads")
    assert tree(people) == before


def test_analyze_refuses_a_results_folder_with_a_link_inside_before_any_work(tmp_path):
    from tests.support import design_synthetic as ds

    ds.agreement_judgments(tmp_path / "humans", n_subjects=2, n_items=8)
    outside = _outside(tmp_path)
    out = tmp_path / "results"
    out.mkdir()
    (out / "tables").symlink_to(outside)
    refused("analyze", str(tmp_path / "humans"), "--out", str(out), "--no-mixed", "--force",
            match=["results/tables is a symbolic link", "never writes through a link"])
    assert sorted(p.name for p in outside.iterdir()) == ["keep.csv"]
    assert sorted(p.name for p in out.iterdir()) == ["tables"]


def test_power_and_report_refuse_a_link_where_they_write(tmp_path):
    from analysis.power.settings import PowerInputError, check_out_folder
    from analysis.report.render import ReportError, render_report

    outside = _outside(tmp_path)
    out = tmp_path / "power"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "power.png").symlink_to(outside / "keep.csv")
    with pytest.raises(PowerInputError, match="figures/power.png is a symbolic link"):
        check_out_folder(out, force=True)
    res = tmp_path / "res"
    res.mkdir()
    (res / "results.json").write_text('{"title": "t", "sections": [], "tables": {}, "figures": {}}')
    (res / "report.html").symlink_to(outside / "keep.csv")
    with pytest.raises(ReportError, match="report.html is a symbolic link"):
        render_report(res)
    assert (outside / "keep.csv").read_text() == "precious\n"
