"""Lists (experiments/lists.py): `--list N` on plan, run-human, run-model and web build (checked: 1..L,
exit 2 otherwise), the id rotation unchanged without it, and `web serve` giving each new participant the
least-filled list under one lock: 30 simultaneous starts from real threads against the real server fill
the lists to within one, each sidecar says how its list was chosen, abandoned sessions stop counting,
and a returning participant keeps its list."""
from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from experiments.design_compiler import compile_sequence
from experiments.lists import check_list, list_counts, n_lists
from experiments.options import OptionError
from experiments.spec import load_spec
from tests.cli_refusal import refused, twinlab
from tests.support.task_server import ThreadedServer

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "experiments" / "specs" / "agreement_attraction.yaml"


@pytest.fixture(scope="module")
def exp():
    return load_spec(str(SPEC))


def test_list_given_by_hand_and_the_rotation_unchanged(exp):
    assert n_lists(exp) == 8
    rot = compile_sequence(exp, "P03")
    assert rot.design["list"] == 3  # the id rotation: trailing number 3 -> list 3
    assert compile_sequence(exp, "P03", list_number=3).sequence_hash == rot.sequence_hash
    five = compile_sequence(exp, "P03", list_number=5)
    assert five.design["list"] == 5 and five.sequence_hash != rot.sequence_hash
    assert [t.item for t in five if t.role == "test"] != [] and all(t.list_number == 5 for t in five)
    assert compile_sequence(exp, "P05").trials == compile_sequence(exp, "P05", list_number=5).trials
    for bad in (0, 9, -1):
        with pytest.raises(OptionError, match="from 1 to 8"):
            check_list(exp, bad)
    with pytest.raises(OptionError, match="has no lists"):
        check_list(load_spec("lakretz2021_demo"), 1)


def test_cli_list_options_are_checked_before_work(tmp_path):
    refused("plan", str(SPEC), "-s", "P01", "--list", "9", match="--list must be from 1 to 8", timeout=120)
    refused("plan", "lakretz2021_demo", "-s", "P01", "--list", "1", match="has no lists", timeout=120)
    refused("run-model", str(SPEC), "--list", "0", "--out", str(tmp_path / "m"), match="--list must be from 1 to 8",
            timeout=120)
    refused("run-human", str(SPEC), "-p", "P01", "--list", "12", "--out", str(tmp_path / "h"),
            match="--list must be from 1 to 8", timeout=120)
    refused("web", "build", str(SPEC), "--out", str(tmp_path / "site"), "--list", "0", match="--list must be from 1 to "
                                                                                             "8",
            timeout=120)
    refused("web", "serve", str(SPEC), "--out", str(tmp_path / "w"), "--abandon-after", "0",
            match="--abandon-after must be from 0.5 minutes", timeout=120)
    assert not any((tmp_path / d).exists() for d in ("m", "h", "site", "w"))
    r = twinlab("plan", str(SPEC), "-s", "P01", "--list", "6", "--out", str(tmp_path / "p.json"), timeout=120)
    assert r.returncode == 0, r.stderr
    plan = json.loads((tmp_path / "p.json").read_text())
    assert plan["design"]["list"] == 6 and {t["list_number"] for t in plan["trials"]} == {6}


def test_web_build_list_and_slot_lists(tmp_path):
    r = twinlab("web", "build", str(SPEC), "--out", str(tmp_path / "site"), "--slots", "3", "--list", "2", timeout=300)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "site" / "index.html").read_text()
    cfg = json.loads(html.split('<script id="twinlab-config" type="application/json">')[1].split("</script>")[0])
    assert cfg["slots"] == ["web002", "web010", "web018"] and cfg["slot_lists"] == [2, 2, 2] and cfg["n_lists"] == 8
    seqs = json.loads((tmp_path / "site" / "sequences.js").read_text().split("=", 1)[1].rstrip().rstrip(";"))
    exp = load_spec(str(SPEC))
    for sid in cfg["slots"]:  # what the import recompiles for the slot: list 2
        assert seqs[sid]["1"]["sequence_hash"] == compile_sequence(exp, sid).sequence_hash
        assert compile_sequence(exp, sid).design["list"] == 2


# ---- web serve: least filled ------------------------------------------------------------------------
class Server(ThreadedServer):
    """`web serve`'s app for the spec, on a loopback port in a thread (tests/support/task_server.py)."""

    def __init__(self, out: Path, abandon_after_min: float = 60.0):
        from participants.web.server import create_app

        super().__init__(create_app(load_spec(str(SPEC)), out, abandon_after_min=abandon_after_min))

    def start(self, pid: str, token: str | None = None, **extra) -> httpx.Response:
        body = {"participant": pid, "session": 1, "token": token or secrets.token_urlsafe(24), "info": {},
                "client": {}, **extra}
        return httpx.post(self.url + "/api/start", json=body, timeout=120)


def _sidecars(out: Path) -> dict[str, dict]:
    return {p.name.split("_subject-")[1].split("_session")[0]: json.loads(p.read_text())
            for p in (out / "data").glob("*_data.json")}


def test_thirty_simultaneous_starts_fill_the_lists_evenly(tmp_path):
    out = tmp_path / "data_root"
    ids = [secrets.token_hex(12) for _ in range(30)]  # Prolific-style: no trailing number to rotate on
    results: dict[str, int] = {}
    gate = threading.Barrier(30)

    with Server(out) as srv:
        def one(pid: str) -> None:
            gate.wait()
            results[pid] = srv.start(pid).status_code

        threads = [threading.Thread(target=one, args=(p,)) for p in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    assert list(results.values()) == [200] * 30
    side = _sidecars(out)
    assert len(side) == 30
    lists = Counter(m["design"]["list"] for m in side.values())
    assert sorted(lists) == list(range(1, 9)) and max(lists.values()) - min(lists.values()) <= 1, lists
    for m in side.values():
        a = m["list_assignment"]
        assert a["method"] == "least_filled" and a["list"] == m["design"]["list"]
        before = {int(k): v for k, v in a["counts_before"].items()}
        assert before[a["list"]] == min(before.values())  # it took a least-filled list
    # the 30 assignments, replayed in the order of their counts, are the sequence a counter would give
    totals = sorted(sum(m["list_assignment"]["counts_before"].values()) for m in side.values())
    assert totals == list(range(30))  # each start saw every earlier one: one lock around count and create


def test_abandoned_sessions_stop_counting_and_returning_participants_keep_their_list(tmp_path):
    out = tmp_path / "data_root"
    with Server(out, abandon_after_min=5) as srv:
        tokens = {}
        for pid in ("alpha", "bravo", "charlie"):
            tokens[pid] = secrets.token_urlsafe(24)
            assert srv.start(pid, tokens[pid]).status_code == 200
        side = _sidecars(out)
        assert [side[p]["design"]["list"] for p in ("alpha", "bravo", "charlie")] == [1, 2, 3]
        old = time.time() - 600  # bravo left 10 minutes ago without finishing
        for p in (out / "data").glob("*subject-bravo_*"):
            os.utime(p, (old, old))
        counted, abandoned = list_counts(out, load_spec(str(SPEC)), 8, 5)
        assert counted[2] == 0 and abandoned[2] == 1 and counted[1] == counted[3] == 1
        assert srv.start("delta").status_code == 200
        d = _sidecars(out)["delta"]
        assert d["design"]["list"] == 2 and d["list_assignment"]["abandoned_not_counted"] == {"2": 1}
        # bravo comes back with its token: its own list, not a new one
        again = srv.start("bravo", tokens["bravo"])
        assert again.status_code == 200 and again.json()["sequence_hash"] == \
            compile_sequence(load_spec(str(SPEC)), "bravo", list_number=2).sequence_hash
        # ?list=N: taken as given and recorded; outside 1..L or not a number: refused
        r = srv.start("echo", list=7)
        assert r.status_code == 200
        e = _sidecars(out)["echo"]
        assert e["design"]["list"] == 7 and e["list_assignment"]["method"] == "given"
        for bad in (0, 9, "x", 2.5):
            r = srv.start(f"fox{secrets.token_hex(2)}", list=bad)
            assert r.status_code == 400 and "list" in r.json()["error"], (bad, r.text)
    # a restarted server reopens bravo on its recorded list
    with Server(out, abandon_after_min=5) as srv:
        again = srv.start("bravo", tokens["bravo"])
        assert again.status_code == 200 and again.json()["sequence_hash"] == \
            compile_sequence(load_spec(str(SPEC)), "bravo", list_number=2).sequence_hash


@pytest.mark.gui
@pytest.mark.untimed  # autopilot sessions; the list and the counts are checked, no time
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_run_human_reads_the_list_given(tmp_path):
    r = twinlab("run-human", str(SPEC), "-p", "autopilot7", "--autopilot", "--list", "3", "--trials", "1", "--out",
                str(tmp_path), "--allow-refresh-mismatch", timeout=600)
    assert r.returncode == 0, r.stderr
    # --resume without --list keeps the session's own list (experiments/run_prep.py RunPlan.list_for)
    r = twinlab("run-human", str(SPEC), "-p", "autopilot7", "--autopilot", "--resume", "--trials", "2", "--out",
                str(tmp_path), "--allow-refresh-mismatch", timeout=600)
    assert r.returncode == 0, r.stderr
    meta = json.loads(next((tmp_path / "data").glob("*_data.json")).read_text())
    assert meta["design"]["list"] == 3 and meta["status"] == "completed"  # the rotation would give list 7
    assert meta["n_trials_written"] == 2 and len(meta["runs"]) == 2
    assert meta["sequence_hash"] == compile_sequence(load_spec(str(SPEC)), "autopilot7", list_number=3).sequence_hash


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.long
def test_run_model_subjects_read_the_list_given(tmp_path):
    r = twinlab("run-model", str(SPEC), "--subjects", "2", "--trials", "2", "--list", "4", "--out", str(tmp_path),
                env={"HF_HUB_OFFLINE": "1"}, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    metas = {p.name: json.loads(p.read_text()) for p in (tmp_path / "data").glob("*_data.json")}
    assert len(metas) == 2 and {m["design"]["list"] for m in metas.values()} == {4}  # m01/m02 would rotate to 1, 2


def test_import_web_checks_the_list_a_built_page_was_asked_for(tmp_path):
    from participants.web.importer import WebImportError, import_web
    from tests.web_support import page_report

    exp = load_spec(str(SPEC))
    seq = compile_sequence(exp, "web002")  # slot 2 of a build: list 2

    def records(asked):
        return "".join(json.dumps({"twinlab_web": 1, "experiment": exp.name, "spec_hash": seq.spec_hash,
                                   "sequence_hash": seq.sequence_hash, "slot_subject_id": "web002",
                                   "participant": "P77", "session": 1, "info": {}, "client": {}, "list": asked,
                                   "result": page_report(seq[i], exp, answer=seq[i].study_record.correct_response,
                                                         by="key")}) + "\n"
                       for i in range(2))

    (tmp_path / "bad.jsonl").write_text(records(3))
    with pytest.raises(WebImportError, match="asked for list 3 but slot web002 reads list 2"):
        import_web([tmp_path / "bad.jsonl"], exp, tmp_path / "out_bad")
    assert not (tmp_path / "out_bad" / "data").exists()
    (tmp_path / "ok.jsonl").write_text(records(2))
    import_web([tmp_path / "ok.jsonl"], exp, tmp_path / "out")
    meta = json.loads(next((tmp_path / "out" / "data").glob("*_data.json")).read_text())
    assert meta["design"]["list"] == 2 and meta["list_assignment"]["method"] == "given"
