"""Checks of a run's protocol and context that `run-model` and `sweep` share, made before a model loads.

Its own module so that the command module (`cli`) and the sweep both import it, not each other.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from experiments.design_compiler import compile_sequence
from experiments.options import OptionError
from experiments.sources.design_rows import load_design
from experiments.tasks import TaskError, check_runner
from model_subjects.backends.registry import DEFAULT_BACKEND
from model_subjects.context import ContextError, parse_context
from model_subjects.protocols import ProtocolError, default_protocol, get_protocol
from model_subjects.runner import subject_ids
from model_subjects.tasks.registry import protocol_names
from stimuli.files import load_items

# The longest item a model subject reads (docs/validation.md "Item length for model subjects"): all of one item's texts
# together (sentence, prefix, options, question, regions, ...). A 20,000-word item made a model subject
# hang for minutes (a forward pass over a context far past the model's window); such an item is refused
# before any model loads, naming it, never truncated.
MAX_ITEM_WORDS = 2_000
MAX_ITEM_CHARS = 20_000  # also bounds an item whose "words" are long runs without spaces


# the materials a model subject reads (docs/general_model.md): a prompt's parts or the texts it scores. Not
# counted: the answers it is scored against (answer, accepted, question_answer), columns the design keeps
# but no task reads, and `regions` beside `sentence` (the same words, cut into regions)
MODEL_READS = ("sentence", "prefix", "options", "pair_sentence", "question", "question_options", "target")


def read_materials(materials: dict[str, Any]) -> dict[str, Any]:
    """The part of an item's materials a model subject reads (what the item limit counts)."""
    read = {k: v for k, v in materials.items() if k in MODEL_READS}
    if "sentence" not in read and "regions" in materials:
        read["regions"] = materials["regions"]
    return read


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)


def item_length_problem(texts: Iterable[str]) -> str | None:
    """Why an item is too long for a model subject (its words or characters over the limit), else None."""
    parts = list(texts)
    words = sum(len(t.split()) for t in parts)
    chars = sum(len(t) for t in parts)
    if words > MAX_ITEM_WORDS:
        return f"{words} words; a model subject reads at most {MAX_ITEM_WORDS} words per item"
    if chars > MAX_ITEM_CHARS:
        return f"{chars} characters; a model subject reads at most {MAX_ITEM_CHARS} characters per item"
    return None


def item_lengths(exp) -> None:
    """Every item the spec can show (the design file's rows, or the stimulus file's items) within the
    limits above; OptionError naming the file, line or item, and the limit."""

    if exp.design is not None:
        df = load_design(exp)
        for r in df.rows:
            problem = item_length_problem(_texts(read_materials(dict(r.materials))))
            if problem:
                raise OptionError(f"{df.path}: line {r.line}: item {r.item!r}: {problem}; shorten or split it")
    elif exp.stimuli.file is not None:
        for it in load_items(exp.stimuli.file):
            problem = item_length_problem(it.words)
            if problem:
                raise OptionError(f"{exp.stimuli.file}: item {it.item_id!r}: {problem}; shorten or split it")


def protocol_and_context(cfg, exp) -> None:
    """--protocol, --question and --context for every subject; OptionError naming the problem."""

    try:
        check_runner(exp.task.kind, "model")
        proto = get_protocol(cfg.protocol or default_protocol(exp.task.kind, exp.task.response),
                             question=cfg.question, max_new_tokens=cfg.max_new_tokens, panel=exp.task.panel,
                             task=exp.task)
        for k in range(cfg.subjects):
            parse_context(cfg.context, k + cfg.first_subject - 1)
        protocol_meant(cfg, exp, proto)
    except (ProtocolError, ContextError, TaskError) as exc:
        raise OptionError(str(exc)) from None
    item_lengths(exp)  # before any model loads: a huge item would hold the model for minutes


def candidate_protocols(exp) -> list[str]:
    """Every protocol name a spec's task kind offers (its model unit's registration: model_subjects.tasks)."""

    return protocol_names(exp.task.kind, exp.task)


def protocol_meant(cfg, exp, proto) -> None:
    """Refuse (ProtocolError) a protocol that cannot mean anything on the items the run would ask
    (e.g. forced choice on items with no critical word and flipped form), naming the protocol, what
    the items lack and the protocols that work on them; checked on every subject's compiled trials
    before any model loads (the list the run reads: --list, else the id rotation)."""

    check = getattr(proto, "check", None)
    if check is None:
        return
    seen: set[tuple[str, str]] = set()
    for sid in subject_ids(cfg):
        seq = compile_sequence(exp, sid, cfg.seed, session=cfg.session, list_number=getattr(cfg, "list_number", None))
        planned = seq.trials if cfg.trials is None else seq.trials[: max(0, int(cfg.trials))]
        for trial in planned:
            if (trial.item_id, trial.block) in seen:
                continue
            seen.add((trial.item_id, trial.block))
            try:
                check(trial)
            except ProtocolError as exc:
                works = []
                for name in candidate_protocols(exp):
                    try:
                        other = get_protocol(name, question=cfg.question, max_new_tokens=cfg.max_new_tokens,
                                             panel=exp.task.panel, task=exp.task)
                        getattr(other, "check", lambda t: None)(trial)
                    except ProtocolError:
                        continue
                    works.append(name)
                raise ProtocolError(f"{exc}. Protocols that work on these items: "
                                    f"{', '.join(works) or 'none'}") from None


def device_available(device: str, backend: str, name: str = "--device") -> None:
    """The device the run asks for exists here (OptionError otherwise), checked before any session file
    is written: a CUDA run on a machine without a GPU used to fail only when the model loaded, after the
    session locks were created."""

    dev = str(device).lower()
    if backend != DEFAULT_BACKEND or dev in ("cpu", "auto"):
        return  # llama.cpp refuses a device itself (CPU only here); a served model runs where the server runs
    import torch  # torch loads only when a model runs

    if dev.startswith("cuda"):
        if not torch.cuda.is_available():
            raise OptionError(f"{name} {device}: CUDA is not available on this machine (torch {torch.__version__}, "
                              f"{'a CPU-only build' if torch.version.cuda is None else 'no GPU found'}); "
                              "use --device cpu; nothing was written")
        index = int(dev.split(":", 1)[1]) if ":" in dev else 0
        if index >= torch.cuda.device_count():
            raise OptionError(f"{name} {device}: this machine has {torch.cuda.device_count()} CUDA device(s) "
                              f"(cuda:0 to cuda:{torch.cuda.device_count() - 1}); nothing was written")
    elif dev == "mps" and not torch.backends.mps.is_available():
        raise OptionError(f"{name} mps: Apple's Metal (MPS) is not available on this machine; use --device cpu; "
                          "nothing was written")
