"""A bad row never silently ends a session. Only a true torn LAST row (the final record without a line
end, or cut inside a quoted cell at the end of the file) is "partly written"; a stray quote, a cell over the field
limit or a row with the wrong number of cells before the end is an error naming the file and line
(experiments/session.py `scan_table`, which every reader of a session table uses), and `analyze`,
`people-jsonl`, `run-model --replay` and `context` refuse with it (exit 2) instead of dropping the rows after it.

Real tables: written by the one session writer (tests/support), then damaged by hand at a known line.
"""
from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from experiments.session import SessionError, scan_table
from tests.cli_refusal import refused, tree
from tests.support import design_synthetic as ds

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from twins_people import write_people  # noqa: E402

N = 40


def _table(n: int = N, extra: str = '{"k": [1, 2]}') -> str:
    """A header and `n` rows of three cells; the third is quoted (it holds commas), as session tables' are."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["trial_index", "response", "extra"])
    for i in range(n):
        w.writerow([i, f"answer {i}", extra])
    return buf.getvalue()


def _with_line(text: str, line: int, edit) -> str:
    lines = text.split("\n")
    lines[line - 1] = edit(lines[line - 1])
    return "\n".join(lines)


@pytest.mark.parametrize("what, edit, expect", [
    ("an opening quote, closed later on the line", lambda s: s.replace("answer", '"answer'), "not a CSV row"),
    ("a quote after a quoted cell", lambda s: s.replace('"{', '"{"x'), "not a CSV row"),
    ("an extra cell", lambda s: s + ",more", "4 cells where the header has 3"),
    ("a missing cell", lambda s: s.split(",")[0] + ",x", "2 cells where the header has 3"),
])
def test_a_damaged_row_in_the_middle_is_an_error_naming_its_line(tmp_path, what, edit, expect):
    f = tmp_path / "s_data.csv"
    f.write_text(_with_line(_table(), 12, edit))  # row 11 (line 1 is the header)
    with pytest.raises(SessionError, match=rf"s_data.csv line 12: .*{expect}"):
        scan_table(f)


def test_a_quote_never_closed_swallowing_the_rest_is_not_a_torn_row(tmp_path):
    """The stray quote runs to the end of the file (no quote after it): what a cut inside a quoted cell looks
    like, except that the lines after it are whole rows. Without the check 30 rows were dropped as 'torn'."""
    f = tmp_path / "s_data.csv"
    f.write_text(_with_line(_table(extra="x"), 12, lambda s: s.replace("answer", '"answer')))
    with pytest.raises(SessionError, match="line 12: a quote opened on this line is never closed, so line 13"):
        scan_table(f)


def test_a_cell_over_the_field_limit_is_an_error_not_a_torn_row(tmp_path, monkeypatch):
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(1000)  # the real limit is 64 MiB; the rule is the same at any size
        f = tmp_path / "s_data.csv"
        f.write_text(_with_line(_table(), 12, lambda s: s.replace("answer", "a" * 2000)))
        with pytest.raises(SessionError, match="line 12: not a CSV row .*field larger than field limit"):
            scan_table(f)
    finally:
        csv.field_size_limit(limit)


@pytest.mark.parametrize("cut", [5, 14, 18])  # inside the first cell, inside the quoted cell, just before the end
def test_a_true_torn_last_row_is_still_set_aside(tmp_path, cut):
    text = _table()
    last = text.rstrip("\n").rsplit("\n", 1)[1] + "\n"
    f = tmp_path / "s_data.csv"
    f.write_text(text[: len(text) - len(last)] + last[:cut])
    scan = scan_table(f)
    assert scan.n_rows == N - 1 and scan.dropped == last[:cut].encode() and scan.torn
    assert [int(r["trial_index"]) for r in scan.rows] == list(range(N - 1))


def test_a_torn_last_row_cut_after_a_line_break_inside_its_quoted_cell(tmp_path):
    text = _table() + '40,"two\nlines'  # the cut came after the quoted cell's own line break
    f = tmp_path / "s_data.csv"
    f.write_text(text)
    assert scan_table(f).n_rows == N and scan_table(f).dropped == b'40,"two\nlines'
    f.write_text(_table() + '40,"two\n')
    assert scan_table(f).n_rows == N and scan_table(f).torn


# ---- the commands ------------------------------------------------------------------------------------------
def _stray_quote(csv_path: Path, line: int) -> None:
    """Open a quote at the start of the `response` cell on `line`, as a hand edit would (the row's other cells
    written as the writer writes them)."""
    text = csv_path.read_text(encoding="utf-8")
    header = next(csv.reader([text.split("\n", 1)[0]]))
    col = header.index("response")
    lines = text.split("\n")
    cells = next(csv.reader([lines[line - 1]]))
    assert len(cells) == len(header), "the row is one line"

    def quoted(c: str) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([c])
        return buf.getvalue()
    lines[line - 1] = ",".join('"' + c if k == col else quoted(c) for k, c in enumerate(cells))
    csv_path.write_text("\n".join(lines), encoding="utf-8")


def test_analyze_refuses_a_session_with_a_stray_quote_naming_the_line(tmp_path):
    ds.agreement_judgments(tmp_path / "humans", n_subjects=2, n_items=N)
    f = sorted((tmp_path / "humans").rglob("*_data.csv"))[0]
    _stray_quote(f, 12)
    refused("analyze", str(tmp_path / "humans"), "--out", str(tmp_path / "out"), "--no-mixed",
            match=[f.name, "line 12"])
    assert not (tmp_path / "out").exists()


def test_analyze_still_notes_a_true_torn_last_row(tmp_path):
    from analysis import api

    ds.agreement_judgments(tmp_path / "humans", n_subjects=2, n_items=N)
    f = sorted((tmp_path / "humans").rglob("*_data.csv"))[0]
    data = f.read_bytes()
    f.write_bytes(data[: len(data) - 30])
    df = api.load_sessions([tmp_path / "humans"])
    info = df.attrs["load_info"]
    assert len(df) == 2 * N - 1 and any("partly written row" in n for n in info.notes)


@pytest.fixture(scope="module")
def damaged_people(tmp_path_factory) -> tuple[Path, Path]:
    from experiments.spec import load_spec

    root = tmp_path_factory.mktemp("bad_people") / "people"
    (f,) = write_people(load_spec("acceptability_yesno"), root, ["P01"])
    _stray_quote(f, 5)  # row 4 of 10
    return root, f


def test_people_jsonl_replay_and_context_refuse_naming_the_line(damaged_people, tmp_path):
    root, f = damaged_people
    before = tree(root)
    refused("people-jsonl", "acceptability_yesno", str(root), "--out", str(tmp_path / "p.jsonl"),
            match=[f.name, "line 5"])
    refused("run-model", "acceptability_yesno", "--replay", str(root), "--out", str(tmp_path / "m"),
            match=[f.name, "line 5"])
    refused("context", str(f), "--trial", "0", match=[f.name, "line 5"])
    assert tree(root) == before and not (tmp_path / "p.jsonl").exists() and not (tmp_path / "m").exists()
