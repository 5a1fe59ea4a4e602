"""Maze's own trial-table columns (kinds/maze/__init__.py `COLUMNS`: `word_correct`, `first_error`): a Maze session's
header carries them after the general layout, before the factors; the browser server's rows fill them with what a
count of the per-word choices in the raw records gives; a session written before (its header without them, the
per-word correctness in `extra`) analyses to the same numbers, and resuming it keeps its header byte for byte."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from experiments import schema
from experiments.session import SessionWriter, read_rows, session_paths

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "support" / "maze" / "maze.yaml"
COLUMNS = ["word_correct", "first_error"]
PID = "p01"


@pytest.fixture(scope="module")
def design():
    from experiments.design_compiler import compile_sequence
    from experiments.spec import load_spec

    exp = load_spec(SPEC)
    return exp, compile_sequence(exp, PID, exp.seed)


def hand_record(t, seq, exp) -> tuple[dict, list]:
    """A trial's raw record from the autopilot's planned presses (accuracy 0.5: some sentences err), each pair
    shown 1 ms after the right answer to the one before, and the count of its first picks, walked here: for word
    k, the first press at or after its pair's onset is right when it is the key of the word's side."""
    from experiments.tasks.record import plan
    from participants.tasks import settings_for
    from participants.tasks.logic import screen_order

    s = settings_for(exp, t)
    sides = screen_order(t, seq, s)
    presses = [{"key": k, "t": round(100.0 + 1000 * at, 3)} for at, k in plan(t, s, sides, seed=PID, accuracy=0.5)
               .phases["read"]]
    keys, n = list(s.keys[:2]), len(sides)
    steps, first, pos = [100.0], [None] * n, 0
    for p in presses:
        right = p["key"] == keys[sides[pos]]
        if first[pos] is None:
            first[pos] = right
        if not right and s.extra["error_mode"] == "end":
            break
        if right:
            pos += 1
            if pos == n:
                break
            steps.append(p["t"] + 1.0)
    return {"presses": presses, "pointers": [], "steps": steps}, first


def server_rows(exp, seq) -> tuple[list[dict], list[list]]:
    """Every trial's row as the browser server builds it from the page's report (web_task_row: the kind's derive)."""
    from participants.web.results import web_task_row

    now = datetime.now(timezone.utc).isoformat()
    rows, counts = [], []
    for t in seq:
        raw, first = hand_record(t, seq, exp)
        end = raw["presses"][-1]["t"] + 400.0
        rec = {"trial_index": t.trial_index, "item_id": t.item_id, "task": "maze", "frame_ms": 1000 / 60, "raw": raw,
               "word_onsets": [], "feedback_onset": None, "iti_onset": end - 300.0, "end": end,
               "feedback_text": None, "started_at": now, "ended_at": now}
        rows.append(web_task_row(rec, t, seq, exp, subject_id=PID, session=1))
        counts.append(first)
    return rows, counts


def write(root: Path, exp, seq, rows: list[dict], columns: list[str] | None = None) -> Path:
    w = SessionWriter.create(root, experiment=exp.name, subject_id=PID, session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                             sequence=seq, columns=columns)
    for r in rows:
        w.append(r)
    w.close()
    return w.csv_path


def old_format(row: dict) -> dict:
    """A row as Maze sessions were written before the kind declared its columns: correctness in `extra`."""
    old = {k: v for k, v in row.items() if k not in COLUMNS}
    extra = json.loads(row["extra"])
    extra.update(word_correct=json.loads(row["word_correct"]), first_error=row["first_error"])
    old["extra"] = json.dumps(extra, separators=(",", ":"))
    return old


def maze_tables(path: Path) -> dict[str, pd.DataFrame]:
    """The maze section's tables of a session, through the real loader."""
    from analysis.load import load
    from kinds.maze.analysis import errors_by_position, kept_rts, region_rts, word_rows

    df, _ = load([path.parent])
    words = word_rows(df, ["extraction"])
    kept, n = kept_rts(words)
    return {"words": words, "regions": region_rts(kept), "errors": errors_by_position(words),
            "counts": pd.DataFrame([n])}


@pytest.fixture(scope="module")
def sessions(design, tmp_path_factory):
    """The same trials written three ways: today's header; the older header (correctness in `extra`); the older
    header for the first two trials, resumed today for the rest."""
    exp, seq = design
    rows, counts = server_rows(exp, seq)
    base = tmp_path_factory.mktemp("maze_columns")
    new = write(base / "new", exp, seq, rows)
    old_header = [c for c in seq.table_columns(earlier=True) if c not in COLUMNS]  # as written before
    old = write(base / "old", exp, seq, [old_format(r) for r in rows], columns=old_header)
    return exp, seq, rows, counts, new, old, old_header, base


def test_the_header_carries_the_declared_columns_after_the_general_layout(sessions):
    exp, seq, *_, new, _old, _h, _b = sessions
    general = schema.GENERAL_COLUMN_NAMES
    header = read_header(new)
    assert header == seq.table_columns() == general + COLUMNS + ["word_rts_ms", "region_rts_ms", "extraction"]
    assert schema.is_table_header(header) and schema.added_columns(["maze"]) == COLUMNS
    assert schema.DTYPES["word_correct"] == "string" and schema.DTYPES["first_error"] == "Int64"
    assert schema.declared().owners["first_error"] == "kind maze"


def read_header(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[0].split(",")


def test_the_columns_equal_a_hand_count_of_the_choices(sessions):
    *_, counts, new, _old, _h, _b = sessions
    rows = read_rows(new)
    assert len(rows) == len(counts) == 4  # one list of the latin square: 4 items
    assert any(False in c for c in counts) and any(False not in c for c in counts)  # both kinds of sentence
    for row, first in zip(rows, counts, strict=False):
        assert json.loads(row["word_correct"]) == first
        assert row["first_error"] == (str(first.index(False)) if False in first else "")
        assert row["correct"] == str(False not in first)
        extra = json.loads(row["extra"])
        assert "word_correct" not in extra and "first_error" not in extra  # one place: the columns


def test_an_old_format_session_analyses_to_the_same_numbers(sessions):
    *_, new, old, old_header, _b = sessions
    assert read_header(old) == old_header and "word_correct" not in old_header
    a, b = maze_tables(new), maze_tables(old)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_dtype=False)
    # and the tables are the hand count's: the errors per word position of the raw records
    counts = sessions[3]
    reached = {k + 1: sum(1 for c in counts if c[k] is not None) for k in range(max(map(len, counts)))}
    wrong = {k + 1: sum(1 for c in counts if c[k] is False) for k in range(max(map(len, counts)))}
    e = a["errors"].set_index("position")
    assert e["n_reached"].to_dict() == {k: v for k, v in reached.items() if v}
    assert e["n_errors"].to_dict() == {k: v for k, v in wrong.items() if reached[k]}


def test_resuming_an_old_format_session_keeps_its_header(sessions, tmp_path):
    """An older-header session cut after two trials, resumed by today's writer with its sequence: the header
    stays byte for byte, the rest's correctness goes to `extra.columns`, and the analysis is the same."""
    exp, seq, rows, _counts, new, _old, old_header, _b = sessions
    first = write(tmp_path, exp, seq, [old_format(r) for r in rows[:2]], columns=old_header)
    head = first.read_bytes().split(b"\n", 1)[0]
    w = SessionWriter.create(tmp_path, experiment=exp.name, subject_id=PID, session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                             sequence=seq, resume=True)
    assert w.columns == old_header and w.in_extra == tuple(COLUMNS)
    for r in rows[2:]:
        w.append(r)
    w.close()
    assert first.read_bytes().split(b"\n", 1)[0] == head
    kept = json.loads(read_rows(first)[2]["extra"])["columns"]
    assert kept["word_correct"] == rows[2]["word_correct"]
    a, b = maze_tables(new), maze_tables(first)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_dtype=False)


def test_a_header_that_is_neither_is_still_refused(sessions, tmp_path):
    """Only the header less the kinds' added columns is taken: one missing a core column is refused."""
    from experiments.session import SessionError

    exp, seq, rows, *_ = sessions
    odd = [c for c in seq.table_columns() if c not in COLUMNS + ["margin"]]
    write(tmp_path, exp, seq, [{k: v for k, v in old_format(r).items() if k != "margin"} for r in rows[:1]],
          columns=odd)
    with pytest.raises(SessionError, match="header is not this version's"):
        SessionWriter.create(tmp_path, experiment=exp.name, subject_id=PID, session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                             sequence=seq, resume=True)
    assert session_paths(tmp_path, exp.name, PID, 1)[0].exists()
