"""The browser runner's server against an outside tester's findings.

In-process (Starlette's TestClient) where a request is enough; a real `twinlab web serve` process
(uvicorn) where the finding is about connections: a client that disconnects mid-body, a body that
never arrives, the Host header. The page-side findings are in tests/participants/test_web_pages.py (Chromium).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
import yaml
from starlette.testclient import TestClient

from experiments.design_compiler import compile_sequence
from experiments.session import SessionError, check_subject_id, read_rows, session_paths
from experiments.spec import load_spec
from participants.web.server import create_app, host_allowed

try:  # the repository root, or tests/, is on sys.path
    from tests.web_support import italian_spec, page_report, start_server, stop
except ModuleNotFoundError:
    from web_support import italian_spec, page_report, start_server, stop

LOCAL = "http://127.0.0.1"
TOKEN_A = "A" * 43
TOKEN_B = "B" * 43


@pytest.fixture()
def served(tmp_path):
    spec = italian_spec(tmp_path, trials=3)
    exp = load_spec(spec)
    out = tmp_path / "data"
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        yield exp, out, client


def _start(client, pid="P01", token=None, client_info=None):
    return client.post("/api/start", json={"participant": pid, "session": 1, "token": token,
                                           "client": client_info if client_info is not None else {}})


def _post(client, pid, token, result):
    return client.post("/api/trial", json={"participant": pid, "session": 1, "token": token, "result": result})


def _data_files(out):
    return sorted(p.name for p in (out / "data").glob("*")) if (out / "data").exists() else []


def test_an_id_with_a_trailing_newline_is_refused_everywhere(served):
    exp, out, client = served
    for pid in ("P07\n", "P07\r\n", "\nP07"):
        r = _start(client, pid=pid)
        assert r.status_code == 400 and "letters and digits" in r.json()["error"], (pid, r.text)
        with pytest.raises(SessionError, match="letters and digits"):
            check_subject_id(pid)
    assert check_subject_id("P07") == "P07"
    assert _data_files(out) == []


def test_a_number_that_overflows_to_infinity_is_refused_and_nothing_is_written(served):
    exp, out, client = served
    for raw in (b'{"participant": "P01", "session": 1, "client": {"refresh": {"hz": 1e400}}}',
                b'{"participant": "P01", "session": 1, "client": {"refresh": {"hz": -1e999}}}',
                b'{"participant": "P01", "session": 1, "client": {"refresh": {"hz": Infinity}}}'):
        r = client.post("/api/start", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "not valid JSON" in r.json()["error"], r.text
    assert _data_files(out) == []
    ok = _start(client, client_info={"refresh": {"hz": 59.94}})  # a finite rate is kept as sent
    assert ok.status_code == 200
    meta = json.loads(session_paths(out, exp.name, "P01", 1)[1].read_text())
    assert meta["refresh_rate_hz"] == 59.94


def test_a_participant_is_never_locked_out_of_a_session_without_trials(served):
    exp, out, client = served
    seq = compile_sequence(exp, "P07", None)
    a = _start(client, pid="P07", token=TOKEN_A)  # the page's own token, kept before it asks
    assert a.status_code == 200 and "token" not in a.json()
    # while A reads the instructions, a second start of P07 (no token, or another) is refused...
    for token in (None, TOKEN_B):
        r = _start(client, pid="P07", token=token)
        assert r.status_code == 403 and "started in another browser" in r.json()["error"], r.text
    # ... and A goes on: the first trial is saved, a reload resumes at the next one
    assert _post(client, "P07", TOKEN_A, page_report(seq[0], exp, answer="violation")).status_code == 200
    again = _start(client, pid="P07", token=TOKEN_A).json()
    assert again["status"] == "run" and again["start"] == 1
    # A's first answer lost (a reload sends the same token again before any trial): still A's session
    c = _start(client, pid="P08", token=TOKEN_B)
    assert c.status_code == 200
    c2 = _start(client, pid="P08", token=TOKEN_B)
    assert c2.status_code == 200 and c2.json()["start"] == 0
    # a client without a token of its own gets one from the server (HTTP clients, older pages)
    d = _start(client, pid="P09").json()
    assert len(d["token"]) >= 22 and _start(client, pid="P09", token=d["token"]).status_code == 200
    # a token that is not one (too short, odd characters) is refused
    assert _start(client, pid="P10", token="short").status_code == 400
    assert len(read_rows(session_paths(out, exp.name, "P07", 1)[0])) == 1


def test_a_keys_only_panel_refuses_clicks(tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["task"]["panel"]["mouse"] = False
    spec.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    exp = load_spec(spec)
    out = tmp_path / "data"
    seq = compile_sequence(exp, "P01", None)
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        assert _start(client, token=TOKEN_A).status_code == 200
        page = client.get("/").text
        cfg = json.loads(page.split('type="application/json">', 1)[1].split("</script>", 1)[0])
        # the page is told (tests/participants/test_web_pages.py: it ignores clicks)
        assert cfg["panel"]["mouse"] is False
        for by in ("mouse", "touch", "pen"):
            r = _post(client, "P01", TOKEN_A, page_report(seq[0], exp, answer="violation", by=by))
            assert r.status_code == 422 and "keys only" in r.json()["error"], r.text
        assert _post(client, "P01", TOKEN_A, page_report(seq[0], exp, answer="violation")).status_code == 200
    assert [r["response"] for r in read_rows(session_paths(out, exp.name, "P01", 1)[0])] == ["violation"]


def test_stale_sidecar_temporaries_of_dead_writers_are_removed_when_the_server_opens(tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    exp = load_spec(spec)
    out = tmp_path / "data"
    (out / "data").mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stem = ".study-x_subject-P01_session-1_data.json"
    stale = [out / "data" / f"{stem}.{dead.pid}-0123abcd.tmp",
             out / f".dataset_description.json.{dead.pid}-89abcdef.tmp"]
    live = out / "data" / f"{stem}.{os.getpid()}-0123abcd.tmp"  # a live writer's: it may be writing it now
    other = out / "data" / ".notes.tmp"  # not a sidecar temporary: not ours to remove
    for p in (*stale, live, other):
        p.write_text("{}", encoding="utf-8")
    with TestClient(create_app(exp, out), base_url=LOCAL):
        pass
    assert [p.exists() for p in stale] == [False, False]
    assert live.exists() and other.exists()


def test_the_frameworks_own_answers_carry_the_security_headers(served):
    exp, out, client = served
    page = client.get("/")
    for r in (client.get("/no/such/page"), client.get("/api/start"), client.put("/"),
              client.get("/static/nothing.js"), page):
        assert r.status_code in (200, 404, 405), r.status_code
        for h in ("content-security-policy", "x-content-type-options", "cross-origin-opener-policy",
                  "referrer-policy", "cache-control"):
            assert r.headers.get(h) == page.headers.get(h) or h == "cache-control", (r.status_code, h, r.headers)
        assert r.headers.get("cache-control") in ("no-store", "no-cache")


@pytest.mark.parametrize("host, allowed, ok", [
    ("127.0.0.1:8000", (), True), ("localhost:8000", (), True), ("[::1]:8000", (), True), ("10.1.2.3", (), True),
    ("evil.example:8000", (), False), ("127.0.0.1.evil.example", (), False), ("", (), False),
    ("lab-pc.example.org:8000", ("lab-pc.example.org",), True), ("LAB-PC.example.org", ("lab-pc.example.org",), True),
    ("anything.example", ("*",), True)])
def test_host_names(host, allowed, ok):
    assert host_allowed(host, allowed) is ok


def test_a_rebinding_host_is_refused_before_any_route_runs(served):
    exp, out, client = served
    r = client.post("http://evil.example/api/start", json={"participant": "P01", "session": 1, "client": {}})
    assert r.status_code == 421 and "--allow-host" in r.json()["error"]
    assert r.headers["content-security-policy"].startswith("default-src 'self'")
    assert _data_files(out) == []


def _raw(url: str, data: bytes) -> socket.socket:
    host, port = url.split("//")[1].split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(data)
    return s


def _headers(url: str, length: int, host: str | None = None) -> bytes:
    h = host or url.split("//")[1]
    return (f"POST /api/start HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


@pytest.mark.slow
def test_a_real_server_disconnects_slow_bodies_logs_no_traceback_and_checks_the_host(tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    out = tmp_path / "data"
    proc, url = start_server(spec, out, "--read-timeout", "1", "--allow-host", "lab-pc.example.org")
    try:
        # a client that goes away in the middle of its body
        for _ in range(3):
            s = _raw(url, _headers(url, 500) + b'{"participant": "P0')
            s.close()
        # a body that never comes: answered 408 after the read timeout, and the connection closed
        s = _raw(url, _headers(url, 500) + b'{"participant"')
        t0 = time.monotonic()
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        waited = time.monotonic() - t0
        s.close()
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer, answer[:300]
        assert 0.5 < waited < 8, waited
        # the Host check on the real server: an unknown name is refused, --allow-host's name and the address answer
        import httpx

        body = {"participant": "P01", "session": 1, "client": {}}
        assert httpx.post(url + "/api/start", json=body, headers={"Host": "evil.example"}).status_code == 421
        assert httpx.get(url + "/", headers={"Host": "lab-pc.example.org"}).status_code == 200
        r = httpx.post(url + "/api/start", json=body)
        assert r.status_code == 200, r.text
    finally:
        stop(proc)
        err = proc.stderr.read().decode()
    assert "Traceback" not in err and "Exception" not in err, err
    assert _data_files(out) == [p.name for p in sorted((out / "data").glob("*"))] and \
        [p for p in _data_files(out) if "P01" in p]  # only the one good start wrote a session
