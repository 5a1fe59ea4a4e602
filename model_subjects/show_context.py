"""`twinlab context SESSION.csv --trial N`: the exact text a model subject read before answering trial N.

Rebuilt from the session's rows, its sidecar (context mode, protocol and its question, chat) and the spec
(`--spec`, else the bundled spec of the session's experiment), then checked against the row's
`extra.context_sha256`: a text that does not hash to what the run recorded is refused, never shown as
what the model read. With `--chat` sessions the text is the chat template's rendering (the model's
tokenizer, read from the local cache)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from model_subjects.context import ContextError, rebuild_contexts, sha256


class ShowContextError(ValueError):
    """A session, trial or spec that cannot give a verified context (the message names which)."""


def _rows(path: Path) -> list[dict[str, Any]]:
    from experiments.session import read_rows

    if not path.is_file():
        raise ShowContextError(f"{path}: no such session file")
    rows = read_rows(path)
    if not rows:
        raise ShowContextError(f"{path}: holds no trials")
    return rows


def _sidecar(path: Path) -> dict[str, Any]:
    side = path.with_suffix(".json")
    if not side.is_file():
        raise ShowContextError(f"{path}: its sidecar {side.name} is missing (it records the context mode and protocol)")
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ShowContextError(f"{side}: not JSON ({exc})") from None


def _spec(rows: list[dict[str, Any]], spec: Path | None):
    from experiments.spec import BUNDLED_SPECS, load_spec

    name = rows[0].get("experiment") or ""
    path = spec or BUNDLED_SPECS / f"{name}.yaml"
    if not Path(path).is_file():
        raise ShowContextError(f"the session's experiment {name!r} is not a bundled spec: give its spec with --spec")
    exp = load_spec(path)
    want = rows[0].get("spec_hash")
    if want and exp.spec_hash != want:
        raise ShowContextError(f"{path}: spec hash {exp.spec_hash[:12]} differs from the session's {str(want)[:12]} "
                               "(another version of the spec): give the spec the session ran with --spec")
    return exp


def _chat_renderer(meta: dict[str, Any]):
    name = (meta.get("model") or {}).get("name") if isinstance(meta.get("model"), dict) else meta.get("model")
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # not in the local cache, no template
        raise ShowContextError(f"a --chat session: rendering needs the chat template of {name!r} from the local "
                               f"model cache ({type(exc).__name__})") from None
    return lambda messages, add_generation_prompt: tok.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=add_generation_prompt)


def session_context(path: str | Path, trial: int, spec: str | Path | None = None) -> dict[str, Any]:
    """{'text', 'sha256', 'trial_index', 'protocol', 'context_mode', 'chat'} for trial `trial` (its
    `trial_index`), verified against the row's recorded hash (ShowContextError when it differs)."""
    from model_subjects.context import parse_context, protocol_for
    from model_subjects.protocol_base import ProtocolError

    path = Path(path)
    rows = _rows(path)
    meta = _sidecar(path)
    idx = {int(r["trial_index"]): k for k, r in enumerate(rows)}
    if trial not in idx:
        raise ShowContextError(f"--trial {trial}: the session holds trials {min(idx)} to {max(idx)}")
    exp = _spec(rows, Path(spec) if spec else None)
    row = rows[idx[trial]]
    extra = json.loads(row.get("extra") or "{}")
    if "context_sha256" not in extra:
        raise ShowContextError(f"{path}: trial {trial} records no context hash (not a model subject's session?)")
    settings = meta.get("protocol_settings") or {}
    chat = bool((meta.get("context") or {}).get("chat"))
    try:
        proto = protocol_for(exp, row.get("protocol") or meta.get("protocol") or "", settings.get("question"))
        from model_subjects.weights import context_part

        mode = parse_context(context_part(row.get("context_mode") or meta.get("context_mode") or "none"))
        texts = rebuild_contexts(exp, rows[: idx[trial] + 1], mode, proto, chat=_chat_renderer(meta) if chat else None)
    except (ProtocolError, ContextError, KeyError) as exc:
        raise ShowContextError(f"{path}: cannot rebuild trial {trial}'s context ({exc})") from None
    text = texts[-1]
    if sha256(text) != extra["context_sha256"]:
        raise ShowContextError(f"{path}: the rebuilt context of trial {trial} does not match the hash the run recorded "
                               f"({sha256(text)[:12]} vs {extra['context_sha256'][:12]}): the spec, sidecar or rows differ "
                               "from the run's")
    return {"text": text, "sha256": extra["context_sha256"], "trial_index": trial, "protocol": proto.name,
            "context_mode": mode.label, "chat": chat}


def context_command(session: Path, trial: int, spec: Path | None = None, as_json: bool = False) -> None:
    """Print trial N's context as the model read it (the hash verified), or a refusal naming the problem."""
    import typer

    from experiments.cli_common import fail

    try:
        got = session_context(session, trial, spec)
    except ShowContextError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(got, indent=1, ensure_ascii=False))
        return
    typer.echo(f"# trial {trial} · {got['protocol']} · context {got['context_mode']} · sha256 {got['sha256'][:16]} "
               "(verified)", err=True)
    typer.echo(got["text"], nl=False)
    typer.echo("")
