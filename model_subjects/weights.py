"""Model subjects that learn in their weights: the settings, their checks, and one subject's weights.

A person learns from the training block's feedback and adapts to what they read; a model subject learns
in context (`--context running`) and, with `--learning weights|both`, in its weights too: after each trial
its weights take K optimizer steps, as van Schijndel & Linzen (2018) adapt a language model sentence by
sentence. What a step learns from (`--update-on`):
  feedback  after a trial whose block gives feedback: the text the model read (its context and the trial's
            question) followed by the right answer in the task's words (what a running history would show
            for it); the loss is the mean cross-entropy of the answer's tokens only. A trial without feedback
            (a test block without it) never teaches its answer.
  read      after every trial, training and test blocks alike: the trial's sentence (language-modelling loss
            over all of its tokens, conditioned on the start token as an empty context is scored).
Learning modes (`--learning`): `context` (today's runs: nothing here is used), `weights` (weights learn; the
context is `none` or a fixed few-shot prompt), `both` (weights learn and the context is `running`).

Exactness: every subject starts from the frozen weights (restored in place from a copy kept for the run,
or a fresh LoRA adapter), the model stays in eval mode (no dropout), torch's deterministic algorithms are
on, and the weights' SHA-256 after each trial's update is in the row (`extra.weights_sha256`). A resumed
session rebuilds its weights by replaying the recorded steps (the steps depend only on the trials and
the history, never on the scores), checking each row's hash; a mismatch refuses the resume.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import numbers
from dataclasses import dataclass
from typing import Any

from experiments.options import OptionError, cli_name
from model_subjects.backends.registry import DEFAULT_BACKEND

LEARNING_MODES = ("context", "weights", "both")
UPDATE_ON = ("feedback", "read")
ADAPTERS = ("full", "lora")
OPTIMIZERS = ("sgd", "adamw")
GRADIENT_BACKENDS = ("transformers",)  # backends whose weights this process can differentiate and change
MAX_LR = 1.0  # a larger step destroys a pretrained model in one update: refused as a typo
MAX_STEPS = 100  # optimizer steps after one trial; more is a typo (and minutes per trial on a CPU)
MAX_RANK = 256
LABEL_SUFFIX = "+weights"  # context_mode of a weight learner: `<context>+weights:<update-on>`
OPTIMIZER_TEXT = {"sgd": "torch.optim.SGD (momentum 0, weight decay 0)",
                  "adamw": "torch.optim.AdamW (betas 0.9/0.999, eps 1e-8, weight decay 0.01)"}


@dataclass(frozen=True)
class LearningSettings:
    """`run-model --learning ... --lr ... --steps ... --adapter ... --update-on ... --optimizer ... --rank ...`."""

    mode: str = "context"
    lr: float = 1e-4
    steps: int = 1
    adapter: str = "full"
    update_on: str = "feedback"
    optimizer: str = "sgd"
    rank: int = 8
    blocks: tuple[str, ...] = ()  # --learn-blocks: the blocks whose trials teach (empty: every block)

    @property
    def in_weights(self) -> bool:
        return self.mode in ("weights", "both")


FROZEN = LearningSettings()  # the defaults: what a run that learns in context alone must leave unchanged
WEIGHT_OPTIONS = ("lr", "steps", "adapter", "update_on", "optimizer", "rank")  # used only when the weights learn


def _is_default(value: Any, default: Any) -> bool:
    """Whether an option holds its default (a NaN, a bool or text where a number belongs never does)."""
    if isinstance(default, str):
        return value == default
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        return False
    return float(value) == float(default)


def settings_of(cfg: Any) -> LearningSettings:
    """The learning settings of a RunConfig (fields absent on an older config: learning in context)."""
    return LearningSettings(mode=getattr(cfg, "learning", "context"), lr=getattr(cfg, "lr", 1e-4),
                            steps=getattr(cfg, "steps", 1), adapter=getattr(cfg, "adapter", "full"),
                            update_on=getattr(cfg, "update_on", "feedback"), optimizer=getattr(cfg, "optimizer", "sgd"),
                            rank=getattr(cfg, "rank", 8), blocks=tuple(getattr(cfg, "learn_blocks", None) or ()))


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise OptionError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


def check_learning(cfg: Any, name: Any = None, replay: bool = False) -> None:
    """The learning options of a run, by one set of rules (run-model, sweep, the API); OptionError naming the
    option. Checked before any model loads: a bad value, a backend without gradients, LoRA without `peft`,
    a context that contradicts the mode. `replay` (run-model --replay): the context is the person's history
    (`both`) or the prompt alone (`weights`), never --context (model_subjects/replay_weights.py)."""

    name = name or cli_name
    s = settings_of(cfg)
    _choice(name("learning"), s.mode, LEARNING_MODES)
    if not s.in_weights:
        given = [f for f in WEIGHT_OPTIONS if not _is_default(getattr(s, f), getattr(FROZEN, f))]
        if given:
            raise OptionError(f"{', '.join(name(f) for f in given)} given with {name('learning')} {s.mode}: the "
                              "weights would stay frozen while the option says they learn; add --learning weights "
                              "(or both), or leave the option out")
        if s.blocks:
            raise OptionError(f"{name('learn_blocks')} names the blocks whose trials change the weights: it needs "
                              f"{name('learning')} weights or both")
        return
    _choice(name("update_on"), s.update_on, UPDATE_ON)
    _choice(name("adapter"), s.adapter, ADAPTERS)
    _choice(name("optimizer"), s.optimizer, OPTIMIZERS)
    lr = s.lr
    if (isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(float(lr))
            or not 0 <= lr <= MAX_LR):
        raise OptionError(f"{name('lr')} must be a number from 0 to {MAX_LR:g} (0: the frozen model's answers), "
                          f"got {lr!r}")
    if isinstance(s.steps, bool) or not isinstance(s.steps, int) or not 1 <= s.steps <= MAX_STEPS:
        raise OptionError(f"{name('steps')} must be from 1 to {MAX_STEPS} optimizer steps per trial, got {s.steps!r}")
    if isinstance(s.rank, bool) or not isinstance(s.rank, int) or not 1 <= s.rank <= MAX_RANK:
        raise OptionError(f"{name('rank')} (LoRA rank) must be from 1 to {MAX_RANK}, got {s.rank!r}")
    backend = getattr(cfg, "backend", None) or DEFAULT_BACKEND
    if backend not in GRADIENT_BACKENDS:
        raise OptionError(f"{name('learning')} {s.mode}: backend {backend!r} gives no gradients (a quantised "
                          f"llama.cpp model or a served one cannot be trained here); weights learn on: "
                          f"{', '.join(GRADIENT_BACKENDS)} (--backend transformers)")
    running = str(getattr(cfg, "context", "none") or "none").startswith("running")
    if s.mode == "weights" and running and not replay:  # a replay refuses --context itself (replay.py)
        raise OptionError(f"{name('learning')} weights with --context {cfg.context}: a model that learns in its "
                          "weights and in a running context is `--learning both`")
    if s.mode == "both" and not running and not replay:
        raise OptionError(f"{name('learning')} both learns in context too: give --context running (or "
                          f"running:<window>), not {getattr(cfg, 'context', 'none')!r}; or use --learning weights")
    if s.adapter == "lora":
        lora_problem = peft_missing()
        if lora_problem:
            raise OptionError(f"{name('adapter')} lora: {lora_problem}; use --adapter full (the bundled model "
                              "trains fully on a CPU)")


def check_learn_blocks(cfg: Any, exp: Any, name: Any = None) -> None:
    """--learn-blocks names blocks of the spec (OptionError naming the option and the spec's blocks)."""

    name = name or cli_name
    names = [b.name for b in exp.blocks]
    unknown = [b for b in settings_of(cfg).blocks if b not in names]
    if unknown:
        raise OptionError(f"{name('learn_blocks')} {','.join(unknown)}: no such block in {exp.name} (its blocks: "
                          f"{', '.join(names)})")


def peft_missing() -> str | None:
    """Why LoRA cannot run here (None: the `peft` package imports)."""

    if importlib.util.find_spec("peft") is None:
        return "the `peft` package is not installed (pip install peft, pinned in requirements.lock)"
    return None


def context_label(label: str, settings: LearningSettings) -> str:
    """The `context_mode` a subject's rows record: the context's own label, and for a weight learner
    `<context>+weights:<update-on>` (so analysis groups context, weights and both learners apart), with
    `@<block>,...` when only those blocks teach (--learn-blocks)."""
    if not settings.in_weights:
        return label
    return f"{label}{LABEL_SUFFIX}:{settings.update_on}" + (f"@{','.join(settings.blocks)}" if settings.blocks else "")


REPLAY_PROMPT_ONLY = "replay:none"  # a replay whose weights alone learn the person's trials (`--learning weights`)


def replay_label(settings: LearningSettings) -> str:
    """The `context_mode` of a replay subject: `replay` (frozen), `replay+weights:<update-on>` (the person's
    history in context and the weights learn: `both`), `replay:none+weights:<update-on>` (the prompt alone,
    the weights learn: `weights`)."""
    base = REPLAY_PROMPT_ONLY if settings.mode == "weights" else "replay"
    return context_label(base, settings)


def context_part(label: str) -> str:
    """The context of a recorded `context_mode` (a weight learner's `<context>+weights:<update-on>` -> `<context>`)."""
    return label.split(LABEL_SUFFIX, 1)[0] if LABEL_SUFFIX in label else label


def learning_identity(settings: LearningSettings, threads: int | None) -> dict[str, Any]:
    """What must not change within a session that learns in its weights (a resume with other settings is
    refused before any trial; the thread count changes float sums, hence the hashes)."""
    return {"mode": settings.mode, "update_on": settings.update_on, "lr": float(settings.lr),
            "steps": settings.steps, "adapter": settings.adapter, "optimizer": settings.optimizer,
            "rank": settings.rank if settings.adapter == "lora" else None, "threads": threads,
            **({"blocks": list(settings.blocks)} if settings.blocks else {})}  # sessions before it keep theirs


def subject_seed(sequence_seed: int | None, subject_id: str) -> int:
    """Each subject's torch seed (LoRA's initial adapter), from the run's seed and the subject's id."""
    digest = hashlib.sha256(f"{sequence_seed}:{subject_id}".encode()).hexdigest()
    return int(digest[:8], 16)
