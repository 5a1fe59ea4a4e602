"""Limits on totals and depth, and costs linear in the input (point 3).

- the formula grammar: nesting beyond MAX_NESTING (parentheses, I() calls, unary signs) and grouping
  parentheses beyond MAX_GROUPING in the text R reads are a named FormulaDepthError, never a
  RecursionError; what is accepted fits in R in well under a second (lme4's cost doubles per level);
- numpy archives built here, in tmp_path: shared nested tuples (a 2**60 tree if rebuilt at each use) read
  at once; totals across members (bytes, members, values built) refused, not only each member;
- the digit-matrix importer counts its items before building any (50,000 problem types refused);
- least-filled list assignment on the real server: a start reads no old sidecar (the counter kept beside
  the data is rebuilt at start-up), counts stay true, another server's journal line is counted; the
  list lock never follows a symbolic link out of the data folder, and a folder at its name is a clean
  503 / exit 2, not a traceback.
"""
from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from analysis.stats import formula as fm

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "experiments" / "specs" / "agreement_attraction.yaml"


# ---- formula depth ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["y ~ " + "(" * 170 + "x" + ")" * 170, "y ~ " + "I(" * 170 + "x" + ")" * 170,
                                  "y ~ I(" + "-" * 170 + "x)", "y ~ I(x" + "^x" * 170 + ")",
                                  "log(" * 60 + "y" + ")" * 60 + " ~ 1",
                                  "y ~ " + "(x + " * 11 + "z" + ")" * 11,
                                  "y ~ " + " + ".join(["x"] * (fm.MAX_TREE_DEPTH + 1))])
def test_deep_formulas_are_a_named_error(text):
    with pytest.raises(fm.FormulaDepthError, match="deep"):
        fm.parse(text)


def test_the_deepest_formulas_accepted_are_written_simply():
    assert fm.parse("y ~ " + "(" * 32 + "x" + ")" * 32).r_text() == "y ~ x"  # redundant: not written
    assert fm.parse("y ~ I(" + "-" * 3 + "x)").r_text() == "y ~ I(- - -x)"
    assert issubclass(fm.FormulaDepthError, fm.FormulaError)  # the CLI's exit 2, like every formula error
    assert fm.grouping_depth("y ~ I(`a((`) + (x + (z)) + (1 | g)") == 2


def test_the_deepest_formulas_accepted_fit_quickly_in_r(r_ready):
    import pandas as pd

    from analysis.stats.formula_fit import fit_formula

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"y": rng.normal(size=60), "x": rng.normal(size=60), "z": rng.normal(size=60),
                       "subject_id": np.repeat([f"s{i}" for i in range(6)], 10)})
    deepest = ["y ~ " + "(x + " * (fm.MAX_GROUPING - 1) + "z" + ")" * (fm.MAX_GROUPING - 1) + " + (1 | subject)",
               "y ~ I(" + "-" * (fm.MAX_NESTING - 1) + "x) + (1 | subject)",
               "y ~ " + "I(" * fm.MAX_NESTING + "x" + ")" * fm.MAX_NESTING + " + (1 | subject)"]
    fit_formula(df, "y ~ x + (1 | subject)")  # R's first fit of the module
    for text in deepest:
        t0 = time.perf_counter()
        fit = fit_formula(df, text, fallback=False)
        assert time.perf_counter() - t0 < 5.0, text
        assert fit.method == "lmer" and len(fit.coefficients) >= 2 and fit.n_obs == 60, text


# ---- numpy archives --------------------------------------------------------------------------------------
def _object_npz(path: Path, value) -> Path:
    arr = np.empty((), dtype=object)
    arr[()] = value
    np.savez(path, all_problems=arr)
    return path


def test_shared_nested_tuples_are_built_once(tmp_path):
    from reproductions.npz import read_npz

    t: tuple = (1,)
    for _ in range(60):  # 2**60 leaves if rebuilt at each use
        t = (t, t)
    path = _object_npz(tmp_path / "shared.npz", {"x": [t, t]})
    assert path.stat().st_size < 6_000
    t0 = time.perf_counter()
    got = read_npz(path)["all_problems"].item()["x"]
    assert time.perf_counter() - t0 < 1.0
    assert got[0] is got[1] and got[0][0] is got[0][1]  # shared in the result as in the file


def test_archive_totals_are_limited_not_only_each_member(tmp_path, monkeypatch):
    from reproductions import npz

    path = tmp_path / "many.npz"
    np.savez_compressed(path, **{f"m{i}": np.zeros(50_000) for i in range(5)})  # 5 x 400 kB from a few kB
    assert path.stat().st_size < 50_000
    assert len(npz.read_npz(path)) == 5
    monkeypatch.setattr(npz, "MAX_TOTAL_BYTES", 1_000_000)  # each member is under MAX_MEMBER_BYTES
    with pytest.raises(npz.NpzError, match="more than 1000000 bytes uncompressed together"):
        npz.read_npz(path)
    monkeypatch.setattr(npz, "MAX_TOTAL_BYTES", 10_000_000)
    monkeypatch.setattr(npz, "MAX_MEMBERS", 4)
    with pytest.raises(npz.NpzError, match="5 members; at most 4"):
        npz.read_npz(path)
    monkeypatch.setattr(npz, "MAX_MEMBERS", 1000)
    monkeypatch.setattr(npz, "MAX_OBJECTS", 1000)
    objects = _object_npz(tmp_path / "objects.npz", {"x": list(range(2000))})
    with pytest.raises(npz.NpzError, match="more than 1000 values"):
        npz.read_npz(objects)


def test_digit_matrix_items_are_counted_before_any_is_built(tmp_path, monkeypatch):
    from reproductions.common import ReproError
    from reproductions.hu_frank import stimuli as st

    def problems(n_types: int, n_each: int) -> dict:
        one = {"prob": np.zeros((n_each, 3, 3, 1)), "answer_choices": np.zeros((n_each, 8, 1)),
               "correct_ind": np.zeros(n_each, dtype=int), "perm_invariant": False}
        return {f"type{i}": one for i in range(n_types)}

    with pytest.raises(ReproError, match=f"problem types; at most {st.MAX_PROBLEM_TYPES}"):
        st.digit_matrices(_object_npz(tmp_path / "types.npz", problems(50_000, 40)))
    monkeypatch.setattr(st, "MAX_ITEMS", 100)
    with pytest.raises(ReproError, match="make 120 items; at most 100"):
        st.digit_matrices(_object_npz(tmp_path / "items.npz", problems(3, 40)))
    assert len(st.digit_matrices(_object_npz(tmp_path / "ok.npz", problems(2, 40)))) == 80


# ---- least-filled lists on the real server ----------------------------------------------------------------
def _server(out: Path, **kw):
    from experiments.spec import load_spec
    from participants.web.server import create_app
    from tests.support.task_server import ThreadedServer

    return ThreadedServer(create_app(load_spec(str(SPEC)), out, **kw))


def _start(srv, pid: str) -> httpx.Response:
    body = {"participant": pid, "session": 1, "token": secrets.token_urlsafe(24), "info": {}, "client": {}}
    return httpx.post(srv.url + "/api/start", json=body, timeout=120)


def _completed_sessions(out: Path, per_list: dict[int, int]) -> None:
    """Sidecars of completed sessions, as the server writes them (the fields the counter reads)."""
    from experiments.session import session_paths

    k = 0
    for ln, n in per_list.items():
        for _ in range(n):
            k += 1
            side = session_paths(out, "agreement_attraction", f"done{k}", 1)[1]
            side.parent.mkdir(parents=True, exist_ok=True)
            side.write_text(json.dumps({"design": {"list": ln}, "status": "completed"}), encoding="utf-8")


def test_a_start_reads_no_old_sidecar_and_counts_stay_true(tmp_path):
    from experiments.list_index import JOURNAL_NAME, peek

    out = tmp_path / "data_root"
    per_list = {ln: 250 for ln in range(1, 9)}
    per_list[5] = 240  # list 5 is short of 10
    _completed_sessions(out, per_list)
    with _server(out) as srv:
        idx = peek(out, "agreement_attraction")
        assert idx is not None and idx.sidecar_reads == 1990  # rebuilt once, at start-up
        t0 = time.perf_counter()
        got = []
        for i in range(12):
            r = _start(srv, f"new{i}")
            assert r.status_code == 200, r.text
            got.append(json.loads(next((out / "data").glob(f"*subject-new{i}_*_data.json")).read_text()))
        elapsed = time.perf_counter() - t0
        assert idx.sidecar_reads - 1990 <= 12 * 13 // 2  # only the new, running sessions, when they changed
        # another server on this folder appended an assignment to the journal: counted by the next start
        with open(out / JOURNAL_NAME, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"experiment": "agreement_attraction", "participant": "elsewhere", "session": 1,
                                 "list": 1}) + "\n")
        (out / "data" / "study-agreementattraction_subject-elsewhere_session-1_data.json").write_text(
            json.dumps({"design": {"list": 1}, "status": "completed"}), encoding="utf-8")
        assert _start(srv, "after").status_code == 200
        after = json.loads(next((out / "data").glob("*subject-after_*_data.json")).read_text())
    lists = [m["design"]["list"] for m in got]
    assert lists[:10] == [5] * 10 and sorted(lists[10:]) == [1, 2]  # list 5 filled first, then the lowest
    for k, m in enumerate(got):  # each start's counts are the hand count of the sessions before it
        want = dict(per_list)
        for earlier in lists[:k]:
            want[earlier] += 1
        assert {int(a): b for a, b in m["list_assignment"]["counts_before"].items()} == want
    assert after["list_assignment"]["counts_before"]["1"] == 252  # 250 + new10's list 1 + elsewhere
    assert elapsed < 12 * 1.0


def test_the_list_lock_never_follows_a_link_and_a_folder_there_is_a_clean_error(tmp_path):
    from experiments.list_index import LOCK_NAME, ListLockError
    from tests.cli_refusal import refused

    out, outside = tmp_path / "data_root", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / LOCK_NAME).symlink_to(outside / "created-by-twinlab")
    with pytest.raises(ListLockError, match="is a symbolic link"):
        _server(out)
    assert not (outside / "created-by-twinlab").exists()
    (out / LOCK_NAME).unlink()
    with _server(out) as srv:  # a link or a folder put there while the server runs
        (out / LOCK_NAME).unlink()
        (out / LOCK_NAME).symlink_to(outside / "created-by-twinlab")
        r = _start(srv, "alpha")
        assert r.status_code == 503 and "symbolic link" in r.json()["error"] and "Traceback" not in r.text
        assert not (outside / "created-by-twinlab").exists()
        (out / LOCK_NAME).unlink()
        (out / LOCK_NAME).mkdir()
        r = _start(srv, "bravo")
        assert r.status_code == 503 and "is a folder" in r.json()["error"] and "Traceback" not in r.text
        assert not list((out / "data").glob("*subject-bravo_*")) if (out / "data").exists() else True
    refused("web", "serve", str(SPEC), "--out", str(out), "--port", str(_free_port()),
            match=[LOCK_NAME, "is a folder"])


def _free_port() -> int:
    from tests.support.task_server import free_port

    return free_port()
