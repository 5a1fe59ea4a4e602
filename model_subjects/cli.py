"""`twinlab run-model`: model subjects on a spec. Imports nothing heavy until the command runs."""
from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Optional

import typer

from experiments import options as o
from experiments.cli_common import fail, prepare_run_or_exit, progress_bar, stderr_console, writes_to_terminal
from experiments.options import OptionError
from experiments.options import batch_size as check_batch_size
from experiments.outputs import check_dataset_folder
from experiments.run_options import run_options
from experiments.run_prep import session_problem
from experiments.session import SessionError
from experiments.spec import SpecError
from model_subjects.backends.base import ModelLoadError
from model_subjects.backends.registry import DEFAULT_BACKEND, OWN_OPTIONS, canonical_name, load_backend
from model_subjects.context import ContextError
from model_subjects.protocols import ProtocolError
from model_subjects.psych201 import export_jsonl
from model_subjects.replay import replay_command
from model_subjects.run_checks import device_available, protocol_and_context
from model_subjects.runner import RunConfig, RunError, Runner, bos_prepended, lock_sessions, subject_ids
from model_subjects.show_context import context_command
from model_subjects.weights import check_learn_blocks, check_learning

# the weight-learning options (model_subjects/weights.py), declared here to keep `run_model` short
_LEARNING = typer.Option("context", "--learning", help="context (weights frozen) | weights (weights learn after "
                         "trials; context none/fewshot) | both (weights learn, --context running)")
_LR = typer.Option(1e-4, "--lr", help="learning rate of the weight updates (0 to 1; 0: the frozen model)")
_STEPS = typer.Option(1, "--steps", help="optimizer steps after each trial that teaches (1 to 100)")
_ADAPTER = typer.Option("full", "--adapter", help="full (all weights) | lora (a LoRA adapter; needs peft)")
_UPDATE_ON = typer.Option("feedback", "--update-on", help="feedback (the right answer, trials with feedback) | "
                          "read (the sentence read, every trial)")
_OPTIMIZER = typer.Option("sgd", "--optimizer", help="sgd | adamw")
_RANK = typer.Option(8, "--rank", help="LoRA rank (--adapter lora)")
_LEARN_BLOCKS = typer.Option("", "--learn-blocks", help="BLOCK,...: only these blocks' trials change the weights "
                             "(e.g. adaptation: the test block is read with the adapted weights, unchanged); "
                             "default: every block")


def run_model(
    spec: str = typer.Argument(..., help="experiment spec (YAML) or the name of a bundled spec"),
    model: Optional[str] = typer.Option(None, "--model", "-m",
                                        help="model: bundled default (SmolLM2-135M-Instruct), a local folder, a "
                                             ".gguf file, or a Hugging Face id already in the local cache"),
    backend: str = typer.Option(DEFAULT_BACKEND, "--backend", "-b",
                                help="model type: transformers (in process, full precision) | llamacpp (a GGUF "
                                     "run quantised by llama.cpp, in process) | openai (a served model)"),
    backend_option: list[str] = typer.Option([], "--backend-option", "-B",
                                             help="a backend-specific setting KEY=VALUE (repeatable), e.g. "
                                                  "-B n_ctx=4096 for llamacpp"),
    subjects: int = typer.Option(1, "--subjects", "-n", help="number of model subjects (m01, m02, ...)"),
    first_subject: int = typer.Option(1, "--first-subject", help="number of the first subject id"),
    subject_prefix: str = typer.Option("m", "--subject-prefix", help="letters of the subject ids (m -> m01, m02, ...)"),
    context: str = typer.Option("none", "--context", "-c",
                                help="none | fewshot:<set or group> | running | running:<window>"),
    protocol: Optional[str] = typer.Option(None, "--protocol", "-p",
                                           help="forced_choice | direct | violation_judgment | "
                                                "sentence_judgment:<type> | sentence_comparison:<type> | "
                                                "production[:completion][:lenient] | surprisal[:bow][:nobos] (per-word "
                                                "surprisal, any spec) | "
                                                "for judgment/choice/rating/completion/lexical_decision specs: "
                                                "meta | direct | direct:mean | production  (default: from the spec's "
                                                "task)"),
    out: Path = typer.Option(Path("sessions"), "--out", "-o", help="session folder (Psych-DS dataset root)"),
    trials: Optional[int] = typer.Option(None, "--trials", help="run only the first N trials of each subject"),
    session: int = typer.Option(1, "--session", help="session number"),
    seed: Optional[int] = typer.Option(None, "--seed", help="override the spec's seed"),
    add_bos: bool = typer.Option(False, "--add-bos/--no-add-bos", show_default=False,
                                 help="prepend the BOS token to every scored text (default: none, the start token "
                                      "before an empty context); the surprisal protocol prepends BOS by its own "
                                      "setting (surprisal:nobos drops it), whatever this says; the sidecar's "
                                      "`bos_prepended` records which"),
    dtype: str = typer.Option("float32", "--dtype", help="float32 | bfloat16 | float16 | auto"),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N | auto (device_map='auto')"),
    batch_size: str = typer.Option("auto", "--batch-size",
                                   help="rows per forward pass, or auto (a token budget for the device)"),
    threads: int = typer.Option(1, "--threads", help="CPU threads for torch (1 is fastest on small CPUs; 0 = torch "
                                                     "default)"),
    chat: bool = typer.Option(False, "--chat/--no-chat", help="render contexts with the model's chat template"),
    kv_cache: bool = typer.Option(True, "--kv-cache/--no-kv-cache",
                                  help="running context: extend one KV cache (off: re-encode the history each trial)"),
    question: Optional[str] = typer.Option(None, "--question", help="question text for violation_judgment/production"),
    max_new_tokens: int = typer.Option(8, "--max-new-tokens", help="production: tokens to generate at most"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    list_number: Optional[int] = typer.Option(None, "--list", help="every subject reads the design's list N (1..L) "
                                                                   "instead of the id rotation"),
    replay: Optional[Path] = typer.Option(None, "--replay",
                                          help="a folder of people's sessions of this spec, or one session's "
                                               "table (.csv beside its .json): the model reads each "
                                               "person's trials in order with the person's answers and feedback in "
                                               "its history and scores the person's answer (subjects "
                                               "<model>replay<person>)"),
    learning: str = _LEARNING, lr: float = _LR, steps: int = _STEPS, adapter: str = _ADAPTER,
    update_on: str = _UPDATE_ON, optimizer: str = _OPTIMIZER, rank: int = _RANK, learn_blocks: str = _LEARN_BLOCKS,
) -> None:
    """Run language-model subjects through the spec's trials (same sequences, context and feedback as humans)."""

    try:
        backend = canonical_name(backend)
        batch_size = check_batch_size(batch_size)  # type: ignore[assignment]
    except ModelLoadError as exc:
        fail(f"--backend: {exc}")
    except OptionError as exc:
        fail(str(exc))
    options = parse_backend_options(backend_option)
    cfg = RunConfig(spec=spec, model=model, backend=backend, backend_options=options, subjects=subjects,
                    first_subject=first_subject, subject_prefix=subject_prefix, context=context,
                    protocol=protocol, out=out, trials=trials, session=session, seed=seed, add_bos=add_bos,
                    dtype=dtype, device=device, batch_size=batch_size, threads=threads or None, chat=chat,
                    kv_cache=kv_cache, question=question, max_new_tokens=max_new_tokens, list_number=list_number,
                    learning=learning, lr=lr, steps=steps, adapter=adapter, update_on=update_on, optimizer=optimizer,
                    learn_blocks=tuple(b.strip() for b in learn_blocks.split(",") if b.strip()),
                    rank=rank)
    check_options(cfg, replay is not None)
    plan = prepare_run_or_exit(spec, session=session, seed=seed, trials=trials, list_number=list_number)

    try:
        check_learn_blocks(cfg, plan.exp)
    except OptionError as exc:
        fail(str(exc))
    if replay is not None:  # twins: model_subjects/replay.py (its locks follow the model's name)
        _replay_out(out, replay)
        _checked(cfg, plan.exp)
        return replay_command(cfg, plan.exp, replay, quiet)
    locks = _checked_and_locked(cfg, plan.exp)
    _run_loaded(cfg, plan, locks, options, quiet)


def _replay_out(out: Path, replay: Path) -> None:
    """The model's sessions are never written into the people's folder, nor theirs into its data/ (one line, exit 2)."""

    if not replay.exists():
        fail(f"--replay {replay}: no such folder or session file")
    try:  # one session's table: its folder is the input the output stays out of
        check_dataset_folder("--out", out, [("the --replay folder", replay if replay.is_dir() else replay.parent)])
    except OptionError as exc:
        fail(str(exc))


def _checked(cfg: Any, exp: Any) -> None:
    """The checks that need the spec: session, protocol and context, device."""

    if session_problem(exp, cfg.session):
        fail(session_problem(exp, cfg.session) or "")
    check_protocol_and_context(cfg, exp)
    try:
        device_available(cfg.device, cfg.backend)
    except OptionError as exc:
        fail(str(exc))


def _checked_and_locked(cfg: Any, exp: Any) -> Any:
    """`_checked`, then the session locks: a second run on these sessions stops here, before the model loads."""

    _checked(cfg, exp)
    try:
        return lock_sessions(cfg.out, exp.name, subject_ids(cfg), cfg.session)
    except (SessionError, RunError) as exc:
        fail(str(exc))


def _run_loaded(cfg: Any, plan: Any, locks: Any, options: dict[str, Any], quiet: bool) -> None:
    """Load the model, run every subject with a progress bar, print one line per subject and a summary."""

    console = stderr_console()
    lm = _load_model(cfg, options, console)
    progress = progress_bar("trials", eta=True, disable=quiet)
    try:
        runner = Runner(cfg, lm, plan=plan)
        states = runner.prepare_subjects()  # every trial askable before any session opens
    except (RunError, ContextError, SpecError) as exc:
        fail(str(exc))
    task = progress.add_task(f"{lm.name} · {runner.protocol.name} · {cfg.context}", total=None)

    def advance(n: int, total: int | None) -> None:
        if total is not None:
            progress.update(task, total=total)
        if n:
            progress.advance(task, n)

    runner.progress = advance
    runner.notify = lambda message: console.print(message, style="yellow", highlight=False, markup=False)
    try:
        with progress:
            summary = runner.run(locks, states)
    except (RunError, ContextError, SessionError, SpecError, ModelLoadError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted; finished trials are saved; run the same command again to continue", code=130)
    for s in summary.subjects:
        scored = s.get("scored_now", s["run_now"])
        acc = ((f"{s['correct_now']}/{scored} correct" if scored else "no right answers to score")
               if s["run_now"] else "nothing left to run")
        console.print(f"  {s['subject_id']} [{s['context_mode']}] {s['trials']}/{s['planned']} trials "
                      f"({acc}) -> {s['csv']}", highlight=False, markup=False, soft_wrap=True)

    bos = "BOS prepended" if bos_prepended(runner.protocol, lm, cfg) else "no BOS"
    typer.echo(f"ran {summary.trials_run} trial(s) for {len(summary.subjects)} subject(s) in {summary.seconds:.1f}s "
               f"({runner.protocol.name}, {cfg.context}, model {lm.name}, backend {cfg.backend}, {bos})")


def _load_model(cfg: Any, options: dict[str, Any], console: Any) -> Any:
    """The backend of `cfg`, loaded under a spinner; a model that cannot load is one line and exit 2."""


    what = f"loading model {cfg.model or 'SmolLM2-135M-Instruct (bundled)'} ({cfg.backend})..."
    if not writes_to_terminal():  # a log gets the line, not a spinner's carriage returns
        console.print(what, highlight=False, markup=False, soft_wrap=True)
    try:
        with console.status(what) if writes_to_terminal() else nullcontext():
            return load_backend(cfg.model, backend=cfg.backend, dtype=cfg.dtype, device=cfg.device,
                                add_bos=cfg.add_bos, batch_size=cfg.batch_size, threads=cfg.threads, **options)
    except ModelLoadError as exc:
        fail(str(exc))


def parse_backend_options(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings -> settings; a value that reads as JSON (4096, true, 0.5) is taken as such."""


    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            fail(f"--backend-option {item!r}: write KEY=VALUE (e.g. n_ctx=4096)")
        if key in OWN_OPTIONS:
            fail(f"--backend-option {item!r}: {key} is an option of run-model itself; use {OWN_OPTIONS[key]} "
                 f"(e.g. {OWN_OPTIONS[key].split('/')[0]} {value or '...'})")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def check_options(cfg, replay: bool = False) -> None:
    """The options, by the rules (experiments/options.py) `sweep`, `reproduce` and `run-human` share;
    exit 2 before the model loads."""

    try:
        run_options(cfg)
        check_learning(cfg, replay=replay)
    except o.OptionError as exc:
        fail(str(exc))


def check_protocol_and_context(cfg, exp) -> None:
    """--protocol, --question and --context for every subject, checked before the model loads."""

    try:
        protocol_and_context(cfg, exp)
    except OptionError as exc:
        fail(str(exc))


def people_jsonl(
    spec: str = typer.Argument(..., help="the experiment spec the people were run on"),
    people: Path = typer.Argument(..., help="folder of the people's sessions, or one session's table (.csv)"),
    out: Path = typer.Option(..., "--out", "-o", help="the JSONL file to write (one line per person's session)"),
    protocol: Optional[str] = typer.Option(None, "--protocol", "-p", help="whose prompts the transcript uses "
                                           "(default: from the spec's task)"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out"),
) -> None:
    """Write each person's session as one Psych-201-style JSONL line of the transcript a model would read.

    The person's answers are marked <<...>>; each trial carries its item, answer, correctness and RT."""

    left: list = []
    try:
        n = export_jsonl(spec, people, out, protocol, force, left)
    except (RunError, SpecError, ProtocolError, SessionError) as exc:  # SessionError: a bad row, named by line
        fail(str(exc))
    for x in left:
        typer.echo(f"left out {x.line()}", err=True)
    typer.echo(f"wrote {n} session(s) to {out}" + (f"; {len(left)} left out (named above)" if left else ""))



def context(
    session: Path = typer.Argument(..., help="a model subject's session CSV (<out>/data/*_data.csv)"),
    trial: int = typer.Option(..., "--trial", help="the trial's trial_index (0 = the first)"),
    spec: Optional[Path] = typer.Option(None, "--spec", help="the spec the session ran (default: the bundled spec of "
                                                             "its experiment)"),
    as_json: bool = typer.Option(False, "--json", help="print {text, sha256, protocol, context_mode, chat} as JSON"),
) -> None:
    """Print the exact text a model read before answering trial N of a session.

    Rebuilt from the session, its sidecar and the spec, and verified against the row's context_sha256."""

    context_command(session, trial, spec, as_json)
