"""The import's one contract and its shared rules: one registry of formats (tools, browser sessions, a study's
release), one reader of text input (FIFO, device, size, BOM, NUL, a counted cp1252 fallback line by line,
--encoding), --bad-trials, and --show-map saying where each value of the mapping came from."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from cli_refusal import refused, tree, twinlab

from participants.imports.api import import_study, show_map
from participants.imports.records import ImportInputError, Mapping

ROOT = Path(__file__).resolve().parents[2]
JSPSYCH = Path(__file__).parent.parent / "data" / "imports" / "jspsych"
TABLE = """participant,session,item,condition,sentence,response,answer,rt
S1,1,1,a,Sentence one.,yes,yes,512
S1,1,2,b,Sentence two.,no,yes,640
S1,1,3,a,Sentence three.,yes,yes,-2080
S2,1,1,b,Sentence one!,no,no,700
S2,1,2,a,Sentence two!,yes,yes,455
S2,1,3,b,Sentence three!,no,no,610
"""


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---- one registry, one contract -------------------------------------------------------------------------------

def test_every_format_is_in_one_registry_behind_one_contract():
    from participants.imports.registry import CommandImporter, Importer, ToolImporter, importers, tool_names

    found = importers()
    assert set(tool_names()) == {"psychopy", "jspsych", "pcibex", "table"}
    assert {"web", "lakretz2021"} <= set(found)
    assert all(isinstance(i, Importer) for i in found.values())
    assert isinstance(found["web"], CommandImporter) and isinstance(found["lakretz2021"], CommandImporter)
    assert callable(found["web"].command()) and callable(found["lakretz2021"].command())
    for name in tool_names():
        imp = found[name]
        assert isinstance(imp, ToolImporter) and isinstance(imp.default_mapping(), Mapping)
    r = found["table"].read([write(Path(os.environ.get("TMPDIR", "/tmp")) / "tw_reg.csv", TABLE)], None)
    assert len(r.trials) == 5 and [e.line for e in r.excluded if e.bad] == [4]


def test_the_old_homes_of_the_registry_are_gone():
    """One home: the analysis package keeps only its error; no other module mounts an import command."""
    import analysis.importers as old

    assert not hasattr(old, "REGISTRY") and not hasattr(old, "register")
    homes = [ROOT / "analysis" / "cli.py", ROOT / "participants" / "web" / "cli.py"]
    text = {p: p.read_text(encoding="utf-8") for p in homes}
    assert not [p for p, t in text.items() if "data_import_app" in t]


def test_sniff_names_the_tool_from_the_file():
    from participants.imports.registry import get_importer, sniff_file

    assert sniff_file(JSPSYCH / "s01.csv")[0][0] == "jspsych"
    assert get_importer("psychopy").sniff(JSPSYCH / "s01.csv") == 0.0
    assert sniff_file(Path("/dev/zero")) == []   # a device is never read


def test_the_import_commands_and_their_help_are_the_users():
    r = twinlab("import", "--help")
    assert r.returncode == 0
    for name in ("psychopy", "jspsych", "pcibex", "table", "web", "lakretz2021"):
        assert name in r.stdout
    r = twinlab("import", "table", "--help")
    assert "--encoding" in r.stdout and "--bad-trials" in r.stdout and "--show-map" in r.stdout


# ---- one reader of text input ------------------------------------------------------------------------------------

def _with_timeout(fn, seconds: float = 20):
    done: dict = {}

    def target():
        try:
            done["value"] = fn()
        except BaseException as exc:  # noqa: BLE001
            done["error"] = exc
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the reader hangs"
    return done


@pytest.mark.parametrize("tool", ["jspsych", "pcibex", "table", "psychopy"])
def test_a_fifo_is_refused_never_opened(tmp_path, tool):
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    done = _with_timeout(lambda: import_study(tool, [fifo], None, tmp_path / "out"))
    assert isinstance(done.get("error"), ImportInputError) and "FIFO" in str(done["error"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tool", ["jspsych", "pcibex", "table"])
def test_a_link_to_dev_zero_is_refused_before_a_byte_is_read(tmp_path, tool):
    link = tmp_path / "results.txt"
    link.symlink_to("/dev/zero")
    refused("import", tool, str(link), "--out", str(tmp_path / "out"), match=[str(link), "device"], timeout=60)
    assert not (tmp_path / "out").exists()


def test_a_fifo_inside_an_input_folder_is_refused_not_skipped(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write(folder / "a.csv", TABLE)
    os.mkfifo(folder / "b.csv")
    done = _with_timeout(lambda: import_study("table", [folder], None, tmp_path / "out"))
    assert isinstance(done.get("error"), ImportInputError) and "b.csv" in str(done["error"])


def test_latin1_lines_among_utf8_are_read_and_counted(tmp_path):
    """A German study: most lines UTF-8, some Latin-1; each line read in its own encoding, the others named."""
    good = TABLE.replace("Sentence one.", "Süße Äpfel.").replace("-2080", "600")
    lines = good.encode("utf-8").splitlines(keepends=True)
    lines[3] = "S1,1,3,a,Größe drei.,yes,yes,600\n".encode("cp1252")
    lines[5] = "S2,1,2,a,Übung zwei!,yes,yes,455\n".encode("latin-1")
    f = write(tmp_path / "f.csv", b"".join(lines))
    r = import_study("table", [f], None, tmp_path / "out")
    assert "f.csv: 2 lines read as cp1252 (not UTF-8): lines 4, 6" in " ".join(r.notes)
    items = (tmp_path / "out" / "spec" / "imported_table_items.csv").read_text(encoding="utf-8")
    assert "Größe drei." in items and "Übung zwei!" in items and "Süße Äpfel." in items
    cli = twinlab("import", "table", str(f), "--out", str(tmp_path / "out2"))
    assert cli.returncode == 0 and "2 lines read as cp1252" in cli.stdout


def test_encoding_reads_the_whole_file_and_is_validated(tmp_path):
    f = write(tmp_path / "f.csv", TABLE.replace("Sentence one.", "Größe.").encode("cp1252"))
    r = import_study("table", [f], None, tmp_path / "out", encoding="cp1252")
    assert not [n for n in r.notes if "cp1252" in n]
    assert "Größe." in (tmp_path / "out" / "spec" / "imported_table_items.csv").read_text(encoding="utf-8")
    refused("import", "table", str(f), "--out", str(tmp_path / "o2"), "--encoding", "klingon",
            match=["--encoding 'klingon'", "not an encoding"])
    refused("import", "table", str(f), "--out", str(tmp_path / "o3"), "--encoding", "rot13",
            match=["not a text encoding"])
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()


def test_utf16_with_its_bom_and_a_utf8_bom_are_read(tmp_path):
    a = write(tmp_path / "a.csv", TABLE.replace("-2080", "600").encode("utf-16"))
    b = write(tmp_path / "b.csv", b"\xef\xbb\xbf" + TABLE.replace("-2080", "600").replace("S1", "S3").replace(
        "S2", "S4").encode("utf-8"))
    r = import_study("table", [a, b], None, tmp_path / "out")
    assert r.trials == 12 and r.people == 4


def test_a_nul_byte_is_refused_naming_its_line(tmp_path):
    f = write(tmp_path / "f.csv", TABLE.replace("Sentence two.", "Sentence\x00two.").encode("utf-8"))
    before = tree(tmp_path)
    refused("import", "table", str(f), "--out", str(tmp_path / "out"), match=[f"{f}: line 3", "NUL"])
    assert tree(tmp_path) == before


def test_a_file_over_the_limit_is_refused_while_it_is_read(tmp_path, monkeypatch):
    from participants.imports import text_input

    f = write(tmp_path / "f.csv", TABLE)
    with pytest.raises(ImportInputError, match="larger than"):
        text_input.read_text(f, max_bytes=50)


# ---- --bad-trials -----------------------------------------------------------------------------------------------

def test_bad_trials_are_excluded_by_default_counted_with_line_and_reason(tmp_path):
    f = write(tmp_path / "t.csv", TABLE)
    r = twinlab("import", "table", str(f), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "1 trial(s) with a broken value excluded" in r.stdout
    assert "t.csv: line 4: bad trial: column 8 (rt)" in r.stdout
    report = json.loads(next((tmp_path / "out").glob("import_table_*.json")).read_text())
    assert report["bad_trials"] == 1 and report["trials"] == 5
    assert report["bad_trial_rows"] == ["t.csv: line 4: bad trial: column 8 (rt) is not a response time in ms "
                                        "(0 to a day)"]
    side = json.loads(next((tmp_path / "out" / "data").glob("*subject-S1_*_data.json")).read_text())
    assert side["imported"]["bad_trials"]["excluded"] == 1 and side["imported"]["bad_trials"]["policy"] == "exclude"
    assert side["imported"]["bad_trials"]["rows"][0].startswith("t.csv: line 4:")
    rows = (tmp_path / "out" / "data").glob("*subject-S1_*_data.csv")
    assert "Sentence three." not in next(rows).read_text(encoding="utf-8")


def test_bad_trials_refuse_names_the_first_bad_line_and_the_fix(tmp_path):
    f = write(tmp_path / "t.csv", TABLE)
    before = tree(tmp_path)
    refused("import", "table", str(f), "--out", str(tmp_path / "out"), "--bad-trials", "refuse",
            match=[f"{f}: line 4", "--bad-trials exclude"])
    assert tree(tmp_path) == before
    with pytest.raises(ImportInputError, match="line 4"):
        import_study("table", [f], None, tmp_path / "out", bad_trials="refuse")
    refused("import", "table", str(f), "--out", str(tmp_path / "out"), "--bad-trials", "maybe",
            match=["--bad-trials 'maybe'"])


# ---- --show-map: where each value came from ------------------------------------------------------------------

def test_show_map_says_where_the_task_and_each_column_came_from(tmp_path):
    f = write(tmp_path / "t.csv", TABLE.replace("-2080", "600"))
    text = show_map("table", [f])
    assert "(--map)" not in text
    assert "task: judgment (defaults" in text or "task: judgment (inferred" in text
    assert "defaults" in text.split("\n")[3]
    m = write(tmp_path / "map.yaml", "task: judgment\nstimulus: sentence\n")
    text = show_map("table", [f], m)
    assert "task: judgment (--map" in text
    line = next(x for x in text.splitlines() if x.startswith("stimulus"))
    assert "--map" in line
    line = next(x for x in text.splitlines() if x.startswith("participant"))
    assert "defaults" in line


def test_show_map_applies_the_import_rules_and_says_where_it_would_stop(tmp_path):
    """The same rules as the import: a task the files have no trials of is refused by both."""
    f = write(tmp_path / "t.csv", TABLE.replace("-2080", "600"))
    m = write(tmp_path / "map.yaml", "task: rating\n")
    imp = twinlab("import", "table", str(f), "--map", str(m), "--out", str(tmp_path / "out"))
    shown = twinlab("import", "table", str(f), "--map", str(m), "--show-map")
    if imp.returncode == 2:
        assert shown.returncode == 2 and "the import would stop" in shown.stdout
        first = [x for x in imp.stderr.splitlines() if x.strip()][-1].split(": ", 1)[-1][:40]
        assert first in " ".join(shown.stdout.split())
    else:
        assert shown.returncode == 0


@pytest.mark.parametrize("tool,source,old,new", [
    ("pcibex", Path(__file__).parent.parent / "data" / "imports" / "pcibex" / "penncontroller_rating_results",
     b"dsafdas", "dsaf\u00e4das".encode("latin-1")),
    ("jspsych", JSPSYCH / "s01.csv", b"The cat", "The c\u00e4t".encode("latin-1"))])
def test_every_reader_reads_latin1_lines_through_the_one_reader(tmp_path, tool, source, old, new):
    """The PCIbex and jsPsych readers, through the importer's read: a line in Latin-1 among UTF-8 ones is read and
    counted by line (Ibex files of a German study); the cell holds the character."""
    from participants.imports.registry import tool_importer

    lines = source.read_bytes().splitlines(keepends=True)
    k = next(i for i, ln in enumerate(lines) if old in ln)
    lines[k] = lines[k].replace(old, new)
    f = tmp_path / source.name
    f.write_bytes(b"".join(lines))
    result = tool_importer(tool).read([f], None)
    assert any(f"{f.name}: 1 line read as cp1252 (not UTF-8): line {k + 1}" in n for n in result.notes), result.notes
    assert len(result.trials) == len(tool_importer(tool).read([source], None).trials)
    if tool == "jspsych":
        assert any("The c\u00e4t" in (t.stimulus or "") for t in result.trials)
