"""`twinlab web serve`: the experiment page, and every trial written as it arrives through the one session writer.

Starlette (ASGI) behind uvicorn. Routes: `/` the page, `/static/<name>` a fixed table of files,
`POST /api/start` (open, resume or report a finished session), `POST /api/trial` (one trial).

Safety: participant ids are letters and digits (a Psych-DS keyword, never a path); a session is
bound to a random token handed out when it starts (only its SHA-256 is kept, in the sidecar, so a
restarted server still knows it) and kept by the page in localStorage: without the token nobody
reads or writes that session, not even with its participant id. Every trial is checked against
the schema and the compiled sequence (participants/web/results.py) and refused with a status
naming the problem: 400 malformed, 403 wrong token, 404 unknown session, 409 out of order or
finished, 413 too large, 415 not JSON, 422 does not fit the trial. A trial is acknowledged only
after its row is fsync'ed, so a closed tab or a killed server loses at most the trial in flight.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import json
import math
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from experiments.list_index import ListLockError
from experiments.lists import (
    DEFAULT_ABANDON_MIN,
    check_list,
    check_list_files,
    choose_list,
    rebuild_index,
    recorded_list,
)
from experiments.options import OptionError
from experiments.run_prep import RunPlan
from experiments.session import SessionError, SessionWriter, remove_stale_temporaries, scan_table, session_paths
from experiments.spec import Experiment
from experiments.trials import TrialSequence
from participants.rows import table_columns
from participants.web.payload import BROWSER_KINDS, page_config, sequence_payload
from participants.web.results import ResultError, web_row, web_task_row
from participants.web.site import assets, index_html
from stimuli.input_rules import ascii_int

RUNNER = "twinlab.participants.web"
MAX_BODY = 256 * 1024  # a trial report is a few kB; 200 presses and clicks stay far below this
MAX_INFO_VALUE = 128
INFO_KEYS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId")
PARTICIPANT_ID = re.compile(r"[A-Za-z0-9]{1,64}")  # used with fullmatch: `$` would let "P07\n" through
TOKEN = re.compile(r"[A-Za-z0-9_-]{22,200}")  # a page's own token: at least 128 random bits, URL-safe base64
READ_TIMEOUT_S = 10.0  # a request body must arrive whole within this (a slow body would hold a connection)
SECURITY_HEADERS = {
    # cross-origin isolation gives the page 5 us timestamps instead of 100 us
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; "
                               "object-src 'none'; "
                               "base-uri 'none'; frame-ancestors 'none'",
}


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any):
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class Live:
    """One open session: its writer, compiled sequence and lock (one trial at a time)."""

    seq: TrialSequence
    n_planned: int
    writer: SessionWriter | None
    token_sha256: str


class WebSessions:
    """The sessions this server writes: opened, resumed and closed here, one writer each."""

    def __init__(self, exp: Experiment, out: Path, *, seed: int | None = None, trials: int | None = None,
                 compile: Callable[[str, int], TrialSequence] | None = None,
                 task_settings: dict[str, Any] | None = None,
                 abandon_after_min: float = DEFAULT_ABANDON_MIN):
        self.exp, self.out, self.seed, self.trials = exp, Path(out), seed, trials
        # experiments/run_prep.py: the sequences and writers of this server's sessions (a live session keeps
        # its sequence in `Live`; the plan keeps none, so a long-running server holds only its open sessions)
        self.plan = RunPlan(exp, seed=seed, trials=trials, keep=0)
        self.abandon_after_min = abandon_after_min  # experiments/lists.py: least-filled list assignment
        # `compile` replaces compile_sequence (tests of general designs until the design compiler serves
        # them); `task_settings` go on top of the spec's task section (participants.tasks.settings)
        self.compile, self.task_settings = compile, task_settings
        self._lock = threading.Lock()
        self._create = threading.Lock()  # session files are created one at a time (see below)
        self._keys: dict[tuple[str, int], threading.Lock] = {}
        self._live: dict[tuple[str, int], Live] = {}

    # ---- checks --------------------------------------------------------------------------------
    def _ids(self, body: dict[str, Any]) -> tuple[str, int]:
        pid, session = body.get("participant"), body.get("session")
        if not isinstance(pid, str) or not PARTICIPANT_ID.fullmatch(pid):
            raise ApiError(400, "participant: an id of 1 to 64 letters and digits is required")
        if isinstance(session, bool) or not isinstance(session, int) or not 1 <= session <= self.exp.sessions:
            raise ApiError(400, f"session: {self.exp.name} has sessions 1 to {self.exp.sessions}")
        return pid, session

    def _key_lock(self, key: tuple[str, int]) -> threading.Lock:
        with self._lock:
            return self._keys.setdefault(key, threading.Lock())

    def _sequence(self, pid: str, session: int, list_number: int | None = None) -> tuple[TrialSequence, int]:
        seq = (self.compile(pid, session) if self.compile is not None
               else self.plan.sequence(pid, session, list_number))
        return seq, self.plan.n_planned(seq)

    @staticmethod
    def _token_ok(token: Any, token_sha256: str | None) -> bool:
        return (isinstance(token, str) and 0 < len(token) <= 200 and token_sha256 is not None
                and hmac.compare_digest(_token_hash(token), token_sha256))

    def _open(self, pid: str, session: int, token: Any) -> Live | None:
        """The live session (reopened from disk after a server restart); None when none exists.

        A wrong or missing token is refused (403), also for a session that holds no trial yet: the page
        makes its token and keeps it before its first start (see `start`), so the participant who started a
        session always holds its token, and a second start of the same id elsewhere can never take the
        session over (that locked the first participant out of their own session).
        """
        key = (pid, session)
        live = self._live.get(key)
        if live is None:
            live = self._reopen(pid, session)
            if live is None:
                return None
        if not self._token_ok(token, live.token_sha256):
            raise ApiError(403, "this session was started in another browser or tab (wrong or missing session "
                                "token); continue it where it started, or ask the researcher", reason="token")
        return live

    def _reopen(self, pid: str, session: int) -> Live | None:
        csv_path, json_path = session_paths(self.out, self.exp.name, pid, session)
        if not (csv_path.exists() or json_path.exists()):
            return None
        if not json_path.exists():
            # killed between creating the table and its sidecar: a header and no trial. Set it aside
            # (renamed, never deleted) and start afresh; anything more is left for the researcher
            if scan_table(csv_path).n_rows:
                raise ApiError(409, f"{csv_path.name} has trials but no sidecar; ask the researcher")
            os.replace(csv_path, csv_path.with_name(f"{csv_path.name}.orphan-{int(time.time())}"))
            return None
        try:
            meta = json.loads(json_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            raise ApiError(409, "this session's sidecar is unreadable; ask the researcher") from None
        web = meta.get("web") or {}
        if meta.get("runner") != RUNNER or not web.get("token_sha256"):
            raise ApiError(409, "this session exists and was not started in the browser; ask the researcher")
        seq, n = self._sequence(pid, session, recorded_list(meta))  # the list the session started with
        live = Live(seq=seq, n_planned=int(meta.get("n_trials_planned", n)), writer=None,
                    token_sha256=web["token_sha256"])
        if meta.get("status") == "completed":
            return live  # finished: never reopened for writing
        try:
            live.writer = self.plan.open_writer(  # the rows kept must be this sequence's first trials
                self.out, pid, seq, "human", live.n_planned, session=session, resume=True, columns=table_columns(seq))
        except SessionError as exc:
            raise ApiError(409, f"cannot continue this session: {exc}") from None
        if live.writer.n_rows >= live.n_planned:
            live.writer.close("completed")
            live.writer = None
            return live
        with self._lock:
            self._live[(pid, session)] = live
        return live

    # ---- the two calls ---------------------------------------------------------------------------
    def start(self, body: dict[str, Any]) -> dict[str, Any]:
        pid, session = self._ids(body)
        info = body.get("info") or {}
        if not isinstance(info, dict) or not all(k in INFO_KEYS and isinstance(v, str) and len(v) <= MAX_INFO_VALUE
                                                 for k, v in info.items()):
            raise ApiError(400, f"info: only {', '.join(INFO_KEYS)} (texts of at most {MAX_INFO_VALUE} characters)")
        client = body.get("client") or {}
        if not isinstance(client, dict) or len(json.dumps(client)) > 8192:
            raise ApiError(400, "client: a JSON object of at most 8 kB")
        run = {"started_at": datetime.now().astimezone().isoformat(timespec="seconds"), "client": client,
               "url_info": info}
        offered = body.get("token")
        if offered is not None and not (isinstance(offered, str) and TOKEN.fullmatch(offered)):
            raise ApiError(400, "token: 22 to 200 URL-safe characters (letters, digits, - and _)")
        with self._key_lock((pid, session)), contextlib.ExitStack() as hold:
            live = self._open(pid, session, offered)
            token = None
            # a new session: its list (least filled, or ?list=N) chosen under one lock with its creation
            if live is None:
                try:
                    ln, how = hold.enter_context(self._list_for(pid, session, body))
                except ListLockError as exc:  # a link or a folder at the lock's name: said, not a traceback
                    raise ApiError(503, f"the server cannot assign lists: {exc}; ask the researcher") from None
                seq, n = self._sequence(pid, session, ln)
                # the page sends a token of its own, kept in localStorage before this request: if the answer
                # is lost (a dropped connection, a killed server), its reload still holds the session's token
                if offered is None:
                    token = secrets.token_urlsafe(32)
                live = Live(seq=seq, n_planned=n, writer=None, token_sha256=_token_hash(offered or token))
                refresh = client.get("refresh") if isinstance(client.get("refresh"), dict) else {}
                meta = {
                    "runner": RUNNER, "participant_info": {"participant": pid, "session": session, **info},
                    "seed": seq.seed, "n_trials_in_sequence": len(seq), "data_kind": "human participant (browser)",
                    "autopilot": False, "timing_mode": "frames", "refresh_rate_hz": refresh.get("hz"),
                    "vsync": None, "trials_limit": self.trials,
                    "web": {"token_sha256": live.token_sha256, "mode": "serve"}, "runs": [run],
                    **({"list_assignment": how} if how else {}),
                }
                try:
                    # one at a time: SessionWriter.create writes the dataset's dataset_description.json
                    # through one fixed temporary name, which two threads must not share
                    with self._create:
                        live.writer = self.plan.open_writer(self.out, pid, seq, "human", n, session=session,
                                                            metadata=meta)  # its header and design record
                except SessionError as exc:
                    raise ApiError(409, f"cannot start this session: {exc}") from None
                self._live[(pid, session)] = live
            elif live.writer is not None:
                w = live.writer
                if w.meta.get("resumes") and "client" not in w.meta["resumes"][-1]:
                    w.meta["resumes"][-1].update(run)
                else:
                    w.meta.setdefault("resumes", []).append({"at": run["started_at"], "from_trial": w.n_rows,
                                                             "reload": True, **run})
                w.meta.setdefault("runs", []).append(run)
                w.save_sidecar()
            if live.writer is None:
                return {"status": "finished", "n_trials": live.n_planned}
            out = {"status": "run", **sequence_payload(live.seq, live.writer.n_rows, live.n_planned, self.exp,
                                                       self.task_settings)}
            if token is not None:
                out["token"] = token
            return out

    def _list_for(self, pid: str, session: int, body: dict[str, Any]):
        """experiments/lists.choose_list: the page's ?list=N (checked) or the least-filled list."""
        if self.compile is not None:  # a test's own sequences: their list is theirs
            return contextlib.nullcontext((None, None))
        try:
            check_list(self.exp, body.get("list"), "list")
        except OptionError as exc:
            raise ApiError(400, str(exc)) from None
        return choose_list(self.out, self.exp, pid, body.get("list"), self.abandon_after_min, session=session)

    def trial(self, body: dict[str, Any]) -> dict[str, Any]:
        pid, session = self._ids(body)
        result = body.get("result")
        with self._key_lock((pid, session)):
            live = self._open(pid, session, body.get("token"))
            if live is None:
                raise ApiError(404, "no such session; start it first")
            if live.writer is None:
                raise ApiError(409, "this session is finished", next=live.n_planned)
            w = live.writer
            i = w.n_rows
            got = result.get("trial_index") if isinstance(result, dict) else None
            if got != i:
                raise ApiError(409, f"trial_index: the session expects trial {i}, got {str(got)[:20]}", next=i)
            try:
                trial = live.seq[i]
                row = (web_task_row(result, trial, live.seq, self.exp, subject_id=pid, session=session,
                                    overrides=self.task_settings) if trial.task in BROWSER_KINDS
                       else web_row(result, trial, live.seq, self.exp, subject_id=pid, session=session))
            except ResultError as exc:
                raise ApiError(422, str(exc)) from None
            try:
                w.append(row)
                finished = w.n_rows >= live.n_planned
                if finished:
                    w.close("completed")
                    live.writer = None
                    with self._lock:
                        self._live.pop((pid, session), None)
                else:
                    w.save_sidecar()
            except SessionError as exc:
                raise ApiError(503, f"the trial could not be saved: {exc}") from None
            return {"saved": i, "next": i + 1, "finished": finished}

    def close_all(self, status: str = "aborted") -> None:
        """Server shutdown: close open sessions (they stay resumable; the sidecar says why)."""
        with self._lock:
            for live in self._live.values():
                if live.writer is not None:
                    live.writer.close(status, abort_reason="the server stopped; the participant can reload to continue")
            self._live.clear()


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows to infinity while parsing: not JSON's numbers either
        raise ValueError(text)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity


async def _json_body(request: Request, read_timeout: float = READ_TIMEOUT_S) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise ApiError(415, "send JSON (Content-Type: application/json)")
    length = request.headers.get("content-length")
    if length is not None and (ascii_int(length, strip=False) is None or int(length) > MAX_BODY):
        raise ApiError(413, f"the request is larger than {MAX_BODY} bytes")
    chunks, size = [], 0
    deadline = asyncio.get_running_loop().time() + read_timeout
    stream = request.stream().__aiter__()
    while True:
        left = deadline - asyncio.get_running_loop().time()
        try:
            chunk = await asyncio.wait_for(stream.__anext__(), timeout=max(left, 0.001))
        except StopAsyncIteration:
            break
        except asyncio.TimeoutError:
            raise ApiError(408, f"the request body did not arrive within {read_timeout:g} s", close=True) from None
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError(413, f"the request is larger than {MAX_BODY} bytes")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks), parse_constant=_no_constant, parse_float=_finite)
    except (ValueError, RecursionError):
        raise ApiError(400, "the request is not valid JSON (numbers must be finite)") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request must be a JSON object")
    return body


def _lifespan(sessions: WebSessions):
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        sessions.close_all()
    return lifespan


def host_allowed(host_header: str, allowed: tuple[str, ...]) -> bool:
    """Whether a request's Host names this server: an IP address (a browser sends one only when the
    link has it), localhost, or a name given with --allow-host ("*": any). Any other name is what a DNS
    rebinding attack sends (a site's own name, pointed at this machine), so it is refused."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        name = host[1:host.find("]")] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if not name:
        return False
    if "*" in allowed or name == "localhost" or name in allowed:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class _Guard:
    """Every answer gets the app's security headers, the framework's own (404, 405...) included; a request
    whose Host is not this server's is refused before any route runs (DNS rebinding)."""

    def __init__(self, app: Any, allowed_hosts: tuple[str, ...]):
        self.app, self.allowed_hosts = app, allowed_hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secured(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                for k, v in {**SECURITY_HEADERS, "Cache-Control": "no-store"}.items():
                    if k.lower().encode() not in have:
                        headers.append((k.lower().encode(), v.encode()))
                message = {**message, "headers": headers}
            await send(message)

        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.allowed_hosts):
            resp = JSONResponse({"error": f"this server does not answer for the host {host[:80]!r}; open it by its "
                                          "address, or start it with --allow-host NAME"}, status_code=421)
            return await resp(scope, receive, send_secured)
        return await self.app(scope, receive, send_secured)


def create_app(exp: Experiment, out: Path, *, seed: int | None = None, trials: int | None = None,
               read_timeout: float = READ_TIMEOUT_S, allowed_hosts: tuple[str, ...] = (),
               compile: Callable[[str, int], TrialSequence] | None = None,
               task_settings: dict[str, Any] | None = None, abandon_after_min: float = DEFAULT_ABANDON_MIN) -> Any:
    """The ASGI app serving `exp` and writing sessions under `out` (a Psych-DS root).

    `allowed_hosts`: host names (besides IP addresses and localhost) the server answers for; "*" for any."""
    for folder in (Path(out), Path(out) / "data"):  # temporaries of a server killed mid-write (kill -9)
        remove_stale_temporaries(folder)
    sessions = WebSessions(exp, out, seed=seed, trials=trials, compile=compile, task_settings=task_settings,
                           abandon_after_min=abandon_after_min)
    if compile is None:  # the list counter: rebuilt from the sidecars here, at start-up, never at a start
        check_list_files(out)  # ListLockError (a symbolic link or a folder at the lock's name) before serving
        rebuild_index(out, exp)
    files = assets()
    page = index_html(exp, page_config(exp, "serve"))

    def secure(resp: Response, cache: bool = False) -> Response:
        resp.headers.update(SECURITY_HEADERS)
        resp.headers["Cache-Control"] = "no-cache" if cache else "no-store"
        return resp

    async def index(request: Request) -> Response:
        return secure(HTMLResponse(page))

    async def static(request: Request) -> Response:
        path = files.get(request.path_params["name"])
        if path is None:
            return secure(JSONResponse({"error": "not found"}, status_code=404))
        return secure(FileResponse(path), cache=True)

    def api(method):
        async def endpoint(request: Request) -> Response:
            try:
                body = await _json_body(request, read_timeout)
                data = await run_in_threadpool(method, body)
                return secure(JSONResponse(data))
            except ApiError as exc:
                extra = dict(exc.extra)
                close = extra.pop("close", False)
                resp = secure(JSONResponse({"error": exc.message, **extra}, status_code=exc.status))
                if close:
                    resp.headers["Connection"] = "close"
                return resp
            except ClientDisconnect:  # the client went away mid-body: nothing to answer, nothing written
                return Response(status_code=400)
        return endpoint

    app = Starlette(routes=[
        Route("/", index, methods=["GET"]),
        Route("/favicon.ico", lambda request: secure(Response(status_code=204)), methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/api/start", api(sessions.start), methods=["POST"]),
        Route("/api/trial", api(sessions.trial), methods=["POST"]),
    ], lifespan=_lifespan(sessions))
    app.state.sessions = sessions
    guarded = _Guard(app, tuple(h.lower() for h in allowed_hosts))
    guarded.state = app.state  # type: ignore[attr-defined]
    return guarded
