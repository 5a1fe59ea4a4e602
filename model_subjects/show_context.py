"""`twinlab context SESSION.csv --trial N`: the exact text a model subject read before answering trial N.

Rebuilt by the run's own rule (model_subjects/context.py: `History`, `row_entry`, `rebuild_contexts`) from the
session's rows, its sidecar (context mode, protocol and its question, chat, the block sizes a block intro's
`{trials}` was filled with) and the spec, then checked against the row's `extra.context_sha256`: a text that
does not hash to what the run recorded is refused, never shown as what the model read. A replay's context
(`run-model --replay`) is the person's history, rebuilt and verified the same way. The spec: `--spec`, else
the file the run read (the sidecar's `spec_file`) when it still holds the session's spec hash, else the
bundled spec of the session's experiment. With `--chat` sessions the text is the chat template's rendering
(the model's tokenizer, read from the local cache)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from experiments.cli_common import fail
from experiments.design_compiler import compile_sequence
from experiments.list_index import recorded_list
from experiments.session import SessionError, scan_table
from experiments.spec import BUNDLED_SPECS, SpecError, load_spec
from model_subjects.context import (
    REPLAY,
    ContextError,
    ContextMode,
    parse_context,
    protocol_for,
    rebuild_contexts,
    recorded_block_sizes,
    row_trial,
    session_sizes,
    sha256,
)
from model_subjects.protocol_base import ProtocolError
from model_subjects.weights import context_part
from stimuli.input_rules import ascii_int

INT_CELLS = ("trial_index", "block_trial_index", "critical_index")  # the cells a trial is rebuilt from as numbers
JSON_CELLS = ("extra", "materials")  # JSON objects (an empty cell: none)


class ShowContextError(ValueError):
    """A session, trial or spec that cannot give a verified context (the message names which)."""


def _rows(path: Path) -> list[dict[str, Any]]:
    """The session's complete rows, every cell the rebuild reads checked (line and column named)."""

    if not path.is_file():
        raise ShowContextError(f"{path}: no such session file")
    try:
        scan = scan_table(path)
    except SessionError as exc:
        raise ShowContextError(str(exc)) from None
    if not scan.rows:
        raise ShowContextError(f"{path}: holds no trials")
    for row, line in zip(scan.rows, scan.lines, strict=False):
        _check_cells(path, row, line)
    return scan.rows


def _check_cells(path: Path, row: dict[str, Any], line: int) -> None:
    for col in INT_CELLS:
        if col in row and ascii_int(row[col], signed=True) is None:
            raise ShowContextError(f"{path}: line {line}, column {col}: {row[col]!r} is not a whole number")
    for col in JSON_CELLS:
        if not row.get(col):
            continue
        try:
            value = json.loads(row[col])
        except ValueError as exc:
            raise ShowContextError(f"{path}: line {line}, column {col}: not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ShowContextError(f"{path}: line {line}, column {col}: not a JSON object")


def _sidecar(path: Path) -> dict[str, Any]:
    side = path.with_suffix(".json")
    if not side.is_file():
        raise ShowContextError(f"{path}: its sidecar {side.name} is missing (it records the context mode and protocol)")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ShowContextError(f"{side}: not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ShowContextError(f"{side}: not a JSON object")
    return meta


def _spec_path(rows: list[dict[str, Any]], meta: dict[str, Any], given: Path | None) -> tuple[Path, str]:
    """The spec file to read and where it comes from: --spec, the file the run read, or the bundled spec."""

    if given is not None:
        return given, "--spec"
    recorded = meta.get("spec_file")
    if isinstance(recorded, str) and recorded and Path(recorded).is_file():
        return Path(recorded), "recorded"
    name = rows[0].get("experiment") or ""
    bundled = BUNDLED_SPECS / f"{name}.yaml"
    if name and bundled.is_file():
        return bundled, "bundled"
    where = f" ({recorded} is gone)" if isinstance(recorded, str) and recorded else ""
    raise ShowContextError(f"the session's experiment {name!r} is not a bundled spec and its sidecar names no spec "
                           f"file that still exists{where}: give its spec with --spec")


def _spec(rows: list[dict[str, Any]], meta: dict[str, Any], given: Path | None):
    """(the spec the session ran, a note saying where it was read from); refused unless its hash is the session's."""

    path, how = _spec_path(rows, meta, given)
    try:
        exp = load_spec(path)
    except SpecError as exc:
        raise ShowContextError(str(exc)) from None
    want = rows[0].get("spec_hash") or meta.get("spec_hash")
    if want and exp.spec_hash != want:
        what = {"--spec": "--spec", "recorded": "the spec file the session was run from",
                "bundled": "the bundled spec"}[how]
        raise ShowContextError(f"{path} ({what}): spec hash {exp.spec_hash} differs from the session's {want} "
                               "(the spec changed since the run): give the spec the session ran with --spec")
    return exp, f"spec read from {path} (hash matches the session's)"


def _chat_renderer(meta: dict[str, Any]):
    name = (meta.get("model") or {}).get("name") if isinstance(meta.get("model"), dict) else meta.get("model")
    try:
        from transformers import AutoTokenizer  # transformers loads only when a model runs

        tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # not in the local cache, no template
        raise ShowContextError(f"a --chat session: rendering needs the chat template of {name!r} from the local "
                               f"model cache ({type(exc).__name__})") from None
    return lambda messages, add_generation_prompt: tok.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=add_generation_prompt)


def _mode(row: dict[str, Any], meta: dict[str, Any]) -> ContextMode:
    """The context mode the run recorded (a replay: the person's history, the running rule)."""

    label = context_part(row.get("context_mode") or meta.get("context_mode") or "none")
    return ContextMode(REPLAY) if label == REPLAY else parse_context(label)


def _sizes(exp: Any, meta: dict[str, Any], rows: list[dict[str, Any]], trial: int, path: Path) -> dict[str, int] | None:
    """The block sizes the run filled its block intros' `{trials}` with when it wrote `trial`: the sidecar's
    record; for a session written before the record, the whole session's rows (a complete session) or its
    compiled sequence as planned (the sequence hash checked). None: no intro says `{trials}`."""
    if not any("{trials}" in (b.intro_text or "") for b in exp.blocks):
        return None
    got = recorded_block_sizes(meta, trial)
    if got is not None:
        return got
    planned = meta.get("n_trials_planned")
    if planned == len(rows):
        return session_sizes([row_trial(exp, r) for r in rows])
    if (rows[0].get("context_mode") or "") != REPLAY and isinstance(planned, int):
        seq = compile_sequence(exp, rows[0]["subject_id"], meta.get("seed"), session=int(rows[0].get("session") or 1),
                               list_number=recorded_list(meta))
        if seq.sequence_hash == rows[0].get("sequence_hash"):
            return session_sizes(seq.trials[:planned])
    raise ShowContextError(f"{path}: the session is incomplete and its sidecar does not record the block sizes its "
                           "intros' {trials} were filled with (written before twinlab recorded them): trial "
                           f"{trial}'s context cannot be rebuilt")


def session_context(path: str | Path, trial: int, spec: str | Path | None = None) -> dict[str, Any]:
    """{'text', 'sha256', 'trial_index', 'protocol', 'context_mode', 'chat', 'spec'} for trial `trial` (its
    `trial_index`), verified against the row's recorded hash (ShowContextError when it differs)."""

    path = Path(path)
    rows = _rows(path)
    meta = _sidecar(path)
    idx = {int(r["trial_index"]): k for k, r in enumerate(rows)}
    if trial not in idx:
        raise ShowContextError(f"--trial {trial}: the session holds trials {min(idx)} to {max(idx)}")
    row = rows[idx[trial]]
    extra = json.loads(row.get("extra") or "{}")
    if "context_sha256" not in extra:
        raise ShowContextError(f"{path}: trial {trial} records no context hash (not a model subject's session?)")
    exp, note = _spec(rows, meta, Path(spec) if spec else None)
    settings = meta.get("protocol_settings") or {}
    chat = bool((meta.get("context") or {}).get("chat"))
    try:
        proto = protocol_for(exp, row.get("protocol") or meta.get("protocol") or "", settings.get("question"))
        mode = _mode(row, meta)
        sizes = _sizes(exp, meta, rows, trial, path)
        texts = rebuild_contexts(exp, rows[: idx[trial] + 1], mode, proto,
                                 chat=_chat_renderer(meta) if chat else None, sizes=sizes)
    except (ProtocolError, ContextError, SpecError, KeyError, ValueError) as exc:
        raise ShowContextError(f"{path}: cannot rebuild trial {trial}'s context ({exc})") from None
    text = texts[-1]
    if sha256(text) != extra["context_sha256"]:
        raise ShowContextError(f"{path}: the rebuilt context of trial {trial} does not match the hash the run recorded "
                               f"({sha256(text)[:12]} vs {extra['context_sha256'][:12]}): the spec, sidecar or rows "
                               "differ "
                               "from the run's; not shown")
    return {"text": text, "sha256": extra["context_sha256"], "trial_index": trial, "protocol": proto.name,
            "context_mode": mode.label, "chat": chat, "spec": note}


def context_command(session: Path, trial: int, spec: Path | None = None, as_json: bool = False) -> None:
    """Print trial N's context as the model read it (the hash verified), or a refusal naming the problem."""


    try:
        got = session_context(session, trial, spec)
    except ShowContextError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(got, indent=1, ensure_ascii=False))
        return
    typer.echo(f"# {got['spec']}", err=True)
    typer.echo(f"# trial {trial} · {got['protocol']} · context {got['context_mode']} · sha256 {got['sha256'][:16]} "
               "(verified)", err=True)
    typer.echo(got["text"], nl=False)
    typer.echo("")
