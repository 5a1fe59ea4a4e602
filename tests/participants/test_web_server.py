"""The browser runner's server and site without a browser: sessions, tokens, refusals, restart, 20 at once.

Reports are built like the page builds them (tests/web_support.page_report); tests/participants/test_web_browser.py
runs real pages in Chromium against the same server.
"""
from __future__ import annotations

import json
import os
import re
import signal
import threading
import time

import pytest
from starlette.testclient import TestClient

from experiments.design_compiler import compile_sequence
from experiments.schema import COLUMN_NAMES
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec

try:  # the repository root, or tests/, is on sys.path
    from tests.web_support import http_participant, italian_spec, page_report, start_server, stop
except ModuleNotFoundError:
    from web_support import http_participant, italian_spec, page_report, start_server, stop

from participants.web.server import create_app
from participants.web.site import build_site

LOCAL = "http://127.0.0.1"  # the server answers for IP addresses and localhost only (DNS rebinding)


@pytest.fixture()
def served(tmp_path):
    spec = italian_spec(tmp_path, trials=4)
    exp = load_spec(spec)
    out = tmp_path / "data"
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        yield exp, out, client


def _start(client, pid="P01", session=1, token=None, **info):
    return client.post("/api/start", json={"participant": pid, "session": session, "token": token, "info": info,
                                           "client": {"refresh": {"hz": 60.0}}})


def _post(client, pid, token, result, session=1):
    return client.post("/api/trial", json={"participant": pid, "session": session, "token": token, "result": result})


def test_a_served_session_writes_each_trial_through_the_session_writer(served):
    exp, out, client = served
    page = client.get("/")
    assert page.status_code == 200 and "twinlab-config" in page.text
    assert page.headers["cross-origin-opener-policy"] == "same-origin"  # 5 us timestamps in the page
    cfg = json.loads(re.search(r'id="twinlab-config" type="application/json">(.*?)</script>', page.text).group(1))
    assert cfg["texts"]["correct_text"] == "Corretto!" and cfg["completion"]["code"] == "C0DE42"
    assert "trials" not in cfg  # serve mode: a participant's trials come with /api/start only
    r = _start(client, PROLIFIC_PID="P01", STUDY_ID="S1", SESSION_ID="X9")
    assert r.status_code == 200, r.text
    s = r.json()
    seq = compile_sequence(exp, "P01", None, session=1)
    assert s["status"] == "run" and s["start"] == 0 and s["n_trials"] == 4
    assert s["sequence_hash"] == seq.sequence_hash and s["spec_hash"] == seq.spec_hash
    assert [t["item_id"] for t in s["trials"]] == [t.item_id for t in seq.trials[:4]]
    plan = [("violation", "key", None), ("no_violation", "mouse", 2), (None, "key", None), ("violation", "touch", None)]
    for i, (answer, by, early) in enumerate(plan):
        r = _post(client, "P01", s["token"],
                  page_report(seq[i], exp, answer=answer, by=by, rt_ms=321.5, early_unit=early))
        assert r.status_code == 200, r.text
        assert r.json() == {"saved": i, "next": i + 1, "finished": i == 3}
    csv_path, json_path = session_paths(out, exp.name, "P01", 1)
    rows = read_rows(csv_path)
    assert list(rows[0]) == COLUMN_NAMES
    for i, row in enumerate(rows):  # the trial's own columns are the compiler's, as in a PsychoPy session
        assert {k: row[k] for k in seq[i].to_row()} == {
            k: "" if v is None else str(v) for k, v in seq[i].to_row().items()}
        assert row["subject_kind"] == "human" and row["context_mode"] == "human" and row["response_mode"] == "panel"
    assert [r["response"] for r in rows] == ["violation", "no_violation", "none", "violation"]
    assert rows[2]["correct"] == "" and rows[2]["feedback_text"] == "Troppo lento!" and rows[2]["rt_ms"] == ""
    assert [float(r["rt_ms"]) for r in rows if r["rt_ms"]] == [321.5] * 3
    assert [json.loads(r["extra"])["answered_by"] for r in rows] == ["key:f", "mouse", None, "touch"]
    assert rows[1]["early_response"] == "violation" and rows[1]["early_response_unit"] == "2"
    clicks = [p for p in json.loads(rows[1]["extra"])["presses"] if p["key"] == "mouse"]
    assert clicks == [{"key": "mouse", "t_ms": clicks[0]["t_ms"], "phase": "panel", "unit": len(seq[1].words) - 1,
                       "answer": "no_violation"}]
    meta = json.loads(json_path.read_text())
    assert (meta["status"] == "completed" and meta["n_trials_written"] == 4
            and meta["runner"] == "twinlab.participants.web")
    assert meta["participant_info"] == {"participant": "P01", "session": 1, "PROLIFIC_PID": "P01", "STUDY_ID": "S1",
                                        "SESSION_ID": "X9"}
    assert s["token"] not in json_path.read_text()  # only its hash is kept
    # a finished session is never restarted
    again = _start(client, token=s["token"]).json()
    assert again == {"status": "finished", "n_trials": 4}
    assert _post(client, "P01", s["token"], page_report(seq[3], exp, answer="violation")).status_code == 409


def test_hostile_and_malformed_posts_are_refused_with_a_clear_status(served):
    exp, out, client = served
    s = _start(client).json()
    tok = s["token"]
    seq = compile_sequence(exp, "P01", None, session=1)
    good = page_report(seq[0], exp, answer="violation")
    other = _start(client, pid="P02").json()

    def post(result=None, pid="P01", token=tok, **kw):
        return client.post("/api/trial", json={"participant": pid, "session": 1, "token": token,
                                               "result": good if result is None else result, **kw})

    cases = {
        "no token": (post(token=None), 403),
        "another participant's token": (post(token=other["token"]), 403),
        "a token for P01 used on P02": (post(pid="P02"), 403),
        "path traversal id": (post(pid="../../etc"), 400),
        "unknown session": (post(pid="P09"), 404),
        "session out of "
        "range": (client.post("/api/trial", json={"participant": "P01", "session": 7, "token": tok}), 400),
        "unknown field": (post({**good, "admin": True}), 422),
        "missing field": (post({k: v for k, v in good.items() if k != "presses"}), 422),
        "wrong item": (post({**good, "item_id": "x"}), 422),
        "answer without a press": (post({**good, "presses": []}), 422),
        "answer by a key that means the other answer": (post({**good, "response": "no_violation"}), 422),
        "feedback that is not the spec's": (post({**good, "feedback_text": "<script>"}), 422),
        "too many presses": (post({**good, "presses": [{"key": "f", "t": good["fixation_onset"]}] * 201}), 422),
        "a unit list of the wrong length": (post({**good, "unit_onsets": good["unit_onsets"][:-1]}), 422),
        "a time outside the trial": (post({**good, "iti_onset": good["fixation_onset"] + 1e9}), 422),
        "a string for a time": (post({**good, "fixation_onset": "soon"}), 422),
        "trial out of order": (post({**good, "trial_index": 2}), 409),
        "not JSON": (client.post("/api/trial", content=b"{nope", headers={"content-type": "application/json"}), 400),
        "NaN": (client.post("/api/trial", content=b'{"participant": NaN}',
                            headers={"content-type": "application/json"}), 400),
        "not a JSON content "
        "type": (client.post("/api/trial", content=b"{}", headers={"content-type": "text/plain"}), 415),
        "too large": (client.post("/api/trial", content=b"[" + b"1," * 200_000 + b"1]",
                                  headers={"content-type": "application/json"}), 413),
        "a start with a bad id": (_start(client, pid="a/b"), 400),
        "a start with unknown URL fields": (client.post("/api/start", json={"participant": "P03", "session": 1,
                                                                           "info": {"cookie": "x"}}), 400),
    }
    wrong = {name: (r.status_code, expected, r.text[:200]) for name, (r, expected) in cases.items()
             if r.status_code != expected}
    assert not wrong
    assert all("error" in r.json() for r, _ in cases.values())
    assert client.get("/static/..%2Fserver.py").status_code == 404
    assert client.get("/static/jspsych.js").status_code == 200
    assert read_rows(session_paths(out, exp.name, "P01", 1)[0]) == []  # nothing refused was written
    r = post()
    assert r.status_code == 200
    dup = post()  # a retry of a trial already saved: 409 with where the session stands
    assert dup.status_code == 409 and dup.json()["next"] == 1
    assert len(read_rows(session_paths(out, exp.name, "P01", 1)[0])) == 1
    assert _start(client, pid="P01").status_code == 403  # a session with a trial in it needs its token
    # nor can a session with no trial yet be taken over: its first participant keeps it
    assert _start(client, pid="P02").status_code == 403
    assert _post(client, "P02", other["token"], page_report(compile_sequence(exp, "P02", None)[0], exp,
                                                            answer=None)).status_code == 200


def test_a_reload_and_a_restarted_server_continue_at_the_next_trial(tmp_path):
    spec = italian_spec(tmp_path, trials=4)
    exp = load_spec(spec)
    out = tmp_path / "data"
    seq = compile_sequence(exp, "P01", None, session=1)
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        s = _start(client).json()
        for i in range(2):
            assert _post(client, "P01", s["token"], page_report(seq[i], exp, answer="violation")).status_code == 200
        again = _start(client, token=s["token"]).json()  # a reload: same session, next trial, no new token
        assert again["status"] == "run" and again["start"] == 2 and "token" not in again
        assert [t["trial_index"] for t in again["trials"]] == [2, 3]
    # a new server process on the same folder (after a crash or a restart)
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        assert _start(client).status_code == 403
        again = _start(client, token=s["token"]).json()
        assert again["start"] == 2
        for i in (2, 3):
            assert _post(client, "P01", s["token"], page_report(seq[i], exp, answer=None)).status_code == 200
    rows = read_rows(session_paths(out, exp.name, "P01", 1)[0])
    assert [r["trial_index"] for r in rows] == ["0", "1", "2", "3"]
    meta = json.loads(session_paths(out, exp.name, "P01", 1)[1].read_text())
    assert meta["status"] == "completed" and len(meta["resumes"]) == 2


def test_web_build_writes_a_self_contained_site_with_the_compilers_sequences(tmp_path):
    from experiments.kinds import kind_file, kind_names

    exp = load_spec(italian_spec(tmp_path))
    summary = build_site(exp, tmp_path / "site", slots=3)
    site = tmp_path / "site"
    assert summary["slots"] == 3
    assert sorted(p.name for p in (site / "static").iterdir()) == sorted(
        ["jspsych.js", "jspsych.css", "plugin-html-keyboard-response.js", "twinlab-frames.js", "twinlab-rsvp.js",
         "twinlab-task.js", "twinlab-experiment.js", "twinlab.css",
         # every kind's page, a new kind's too
         *(f"kind-{k}.js" for k in kind_names() if kind_file(k, "page.js"))])
    assert ({"kind-judgment.js", "kind-rating.js", "kind-self_paced_reading.js"}
            <= {p.name for p in (site / "static").iterdir()})
    html = (site / "index.html").read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing loaded from the network
    seqs = json.loads((site / "sequences.js").read_text().split("=", 1)[1].rstrip().rstrip(";"))
    for slot in ("web001", "web003"):
        ref = compile_sequence(exp, slot, None, session=1)
        got = seqs[slot]["1"]
        assert got["sequence_hash"] == ref.sequence_hash
        assert [t["units"] for t in got["trials"]] == [list(t.words) for t in ref]
    with pytest.raises(Exception, match="exists"):
        build_site(exp, site, slots=3)


def test_twenty_participants_at_once_lose_and_duplicate_nothing_even_when_the_server_is_killed(tmp_path):
    """20 HTTP participants against a real server process; the server is killed (-9) mid-run and restarted."""
    spec = italian_spec(tmp_path, trials=12)
    exp = load_spec(spec)
    out = tmp_path / "data"
    proc, url = start_server(spec, out)
    pids = [f"C{k:02d}" for k in range(20)]
    seqs = {p: compile_sequence(exp, p, None, session=1) for p in pids}
    acked: dict[str, set[int]] = {p: set() for p in pids}
    errors: list[str] = []
    state = {"url": url}
    threads = [threading.Thread(target=http_participant, args=(state, p, seqs[p], exp, acked[p], errors, 90))
               for p in pids]
    for t in threads:
        t.start()
    try:
        while sum(len(a) for a in acked.values()) < 60:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # a crash while trials are in flight
        proc.wait()
        proc, state["url"] = start_server(spec, out, port=int(url.rsplit(":", 1)[1]))
        for t in threads:
            t.join(90)
    finally:
        stop(proc)
    assert not errors
    for p in pids:
        rows = read_rows(session_paths(out, exp.name, p, 1)[0])
        assert [int(r["trial_index"]) for r in rows] == list(range(12)), p  # none lost, none twice
        assert [r["item_id"] for r in rows] == [t.item_id for t in seqs[p].trials[:12]]
        assert acked[p] <= set(range(12))
        assert json.loads(session_paths(out, exp.name, p, 1)[1].read_text())["status"] == "completed"


def test_a_table_left_without_its_sidecar_by_a_kill_is_set_aside_only_when_it_holds_no_trial(served):
    exp, out, client = served
    csv_path, json_path = session_paths(out, exp.name, "P04", 1)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    csv_path.write_text(",".join(COLUMN_NAMES) + "\n")  # a kill between the table's header and its sidecar
    r = _start(client, pid="P04")
    assert r.status_code == 200 and r.json()["start"] == 0
    assert [p.name for p in csv_path.parent.glob("*.orphan-*")] and json_path.exists()
    csv5, _ = session_paths(out, exp.name, "P05", 1)
    csv5.write_text(",".join(COLUMN_NAMES) + "\n" + ",".join("x" * len(COLUMN_NAMES)) + "\n")
    r = _start(client, pid="P05")
    assert r.status_code == 409 and "no sidecar" in r.json()["error"]
    assert csv5.read_text().count("\n") == 2  # untouched


def test_multi_session_specs_serve_each_session_its_own_sequence(tmp_path):
    exp = load_spec("lakretz2021_replication")
    with TestClient(create_app(exp, tmp_path / "data", trials=2), base_url=LOCAL) as client:
        one = _start(client, session=1).json()
        two = _start(client, session=2).json()
        assert _start(client, session=3).status_code == 400
    s1, s2 = compile_sequence(exp, "P01", None, session=1), compile_sequence(exp, "P01", None, session=2)
    assert (one["sequence_hash"], two["sequence_hash"]) == (s1.sequence_hash, s2.sequence_hash)
    assert [t["block"] for t in one["trials"]] == ["training"] * 2
    assert [t["block"] for t in two["trials"]] == ["main"] * 2
    assert one["token"] != two["token"] and one["n_trials"] == two["n_trials"] == 2


def test_a_second_server_on_the_same_folder_cannot_write_an_open_session(tmp_path):
    exp = load_spec(italian_spec(tmp_path, trials=4))
    out = tmp_path / "data"
    seq = compile_sequence(exp, "P01", None)
    with (TestClient(create_app(exp, out), base_url=LOCAL) as first,
          TestClient(create_app(exp, out), base_url=LOCAL) as second):
        tok = _start(first).json()["token"]
        assert _post(first, "P01", tok, page_report(seq[0], exp, answer=None)).status_code == 200
        r = _start(second, token=tok)
        assert r.status_code == 409 and "is being written by" in r.json()["error"], r.text
        assert _post(second, "P01", tok, page_report(seq[1], exp, answer=None)).status_code == 409
        assert _post(first, "P01", tok, page_report(seq[1], exp, answer=None)).status_code == 200
    assert [r["trial_index"] for r in read_rows(session_paths(out, exp.name, "P01", 1)[0])] == ["0", "1"]
