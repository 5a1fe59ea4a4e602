"""What a model subject reads before each answer: its context, built from the spec.

Modes (the `context_mode` column):
  none                 the trial's prompt alone
  fewshot:<set>        a prompt set from stimuli.prompts (one sentence per line), then the prompt;
                       a group name (twoshot, eightshot, interp, zeroshot) assigns its sets to
                       subjects in turn (m01 -> first set, m02 -> second, ...)
  running              the instructions the humans read, each block's intro (and the break text
                       between blocks), then every earlier trial of this session: its prompt, the
                       model's own answer and the feedback that answer earned, then the current
                       prompt; `running:<W>` keeps only the last W trials (instructions stay)

Plain rendering rule (RULE): every instruction page and block intro (its {trials} filled in; no pause
screen between blocks, since v2) and every finished trial is one segment
ending in a newline; a finished trial is `prompt + answer_text + "\\n"` followed by
`feedback_text + "\\n"` when the block gives feedback. So for trial k,
    context(k) = context(k-1) + exchange(k-1) [+ intro of a new block] , then prompt(k).
Chat rendering (`chat=True`, instruction-tuned models) puts the same texts into user/assistant
turns of the model's chat template: the prompt (with whatever precedes it) is a user turn, the
answer the assistant turn, the feedback opens the next user turn.

Every task kind is described by the same rule, a `HistoryEntry` per finished trial (`history_entry`):
the question is the protocol's first query prompt (the sentence and question of a judgment or rating, the
numbered options of a choice, the prefix of a completion) and the answer is what was chosen in the task's
words (the label, the option, the scale point, the word), so a running history reads as the trials and
answers a person gave. A protocol that reads the sentence instead of asking (`direct`: log P(sentence)
against its partner, or of the critical word against its flip) puts the task's question and the label its
log-probabilities chose into its history (`history_entry` method: since v3; before, the history showed
the sentence and the feedback without the answer). Protocols without a decision (`surprisal`, a rating's
or lexical decision's `direct`) show the sentence read. The answer may be the model's own or, for a replay
of a person's session, the person's (`history_entry(..., response=<the person's>, answer_text=None)`).

Every row stores the SHA-256 of its context text; `rebuild_contexts` rebuilds those texts from
the trial table and the spec alone, so any trial's context can be recovered and checked.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from experiments.screen_texts import block_intro, block_sizes
from experiments.spec import Experiment
from experiments.tasks.earned import feedback_earned
from experiments.trials import Trial
from stimuli.input_rules import ascii_int
from stimuli.prompts import PROMPT_GROUPS, PROMPT_SETS, get_prompt_set, resolve_prompt_sets

# v4: a reading protocol's history (surprisal) shows a replayed person's trial as the sentence read, then the
# comprehension question and the person's answer (v3 showed the answer alone)
RULE = "twinlab-context-v4"
# v3: a `direct` protocol's history shows the question and its answer; v2: no break text between blocks,
# {trials} filled in. In order, oldest first: a protocol's own `history_entry` applies from its `history_since`
RULES_READ = ("twinlab-context-v2", "twinlab-context-v3", RULE)
ChatRenderer = Callable[[list[dict[str, str]], bool], str]


class ContextError(ValueError):
    """A context mode that cannot be used; the message says what is available."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ContextMode:
    kind: str  # none | fewshot | running
    prompt_set: str | None = None  # fewshot: the resolved set
    group: str | None = None  # fewshot: the group or set name the user gave
    window: int | None = None  # running: keep only the last `window` trials

    @property
    def label(self) -> str:
        if self.kind == "fewshot":
            return f"fewshot:{self.prompt_set}"
        if self.kind == "running" and self.window:
            return f"running:{self.window}"
        return self.kind


def parse_context(text: str, subject_index: int = 0) -> ContextMode:
    """'none' | 'fewshot:<set or group>' | 'running' | 'running:<window>' -> ContextMode."""


    t = (text or "none").strip()
    if t == "none":
        return ContextMode("none")
    if t == "running" or t.startswith("running:"):
        w = t.split(":", 1)[1] if ":" in t else ""
        if w and (ascii_int(w, strip=False) is None or int(w) < 1):
            raise ContextError(f"context {text!r}: the running window must be a positive number of trials")
        return ContextMode("running", window=int(w) if w else None)
    if t.startswith("fewshot:"):
        name = t.split(":", 1)[1]
        try:
            sets = resolve_prompt_sets(name)
        except KeyError:
            raise ContextError(
                f"unknown prompt set {name!r}; sets: {', '.join(PROMPT_SETS)}; groups: {', '.join(PROMPT_GROUPS)}"
            ) from None
        chosen = sets[subject_index % len(sets)]
        return ContextMode("fewshot", prompt_set=chosen.name, group=name)
    raise ContextError(f"unknown context {text!r}; use none, fewshot:<set>, running or running:<window>")


def fewshot_text(mode: ContextMode) -> str:
    return get_prompt_set(mode.prompt_set).text + "\n" if mode.prompt_set else ""


def preamble_segments(exp: Experiment) -> list[str]:
    """The instructions as the humans read them, one page per segment."""
    return [page.strip() + "\n" for page in exp.texts.instructions]


def block_start_segments(exp: Experiment, trial: Trial, previous_block: str | None,
                         sizes: dict[str, int] | None = None) -> list[str]:
    """Texts shown when `trial` opens a new block: the block's intro, `{trials}` filled from `sizes`
    (trials per block in this session, see `experiments.screen_texts.block_sizes`).

    The pause screen between blocks (`break_text`, "Take a short break. Press SPACE to continue.") is
    not given to model subjects: it is for resting, says nothing about the task, and asks for a key
    press that is no part of a model's trial (docs/model_subjects.md)."""
    if trial.block == previous_block:
        return []
    try:
        intro = exp.block(trial.block).intro_text
    except KeyError:
        intro = None
    if intro:
        return [block_intro(intro, (sizes or {}).get(trial.block)).strip() + "\n"]
    return []


def feedback_for(exp: Experiment, trial: Trial, correct: bool) -> str | None:
    """The feedback text the answer earned, or None when the block gives no feedback."""
    return feedback_earned(exp, trial, bool(correct), rsvp=False)  # an undecided answer (None) reads as wrong


@dataclass(frozen=True)
class HistoryEntry:
    """One finished trial as a running context shows it: the question, the answer in the task's words
    (leading space as the protocol writes it), the feedback that answer earned (None: the block gives none)."""

    question: str
    answer: str
    feedback: str | None


def option_words(protocol: Any, trial: Trial, response: str) -> str:
    """An answer value (a person's, or a model's own) in the words a model's answer has: the protocol's own
    mapping (`answer_words`) if it has one; else the option of the first query labelled with it; a choice asked
    by number: the answer's option (first query's order); options paired with the task's labels (one per label,
    in the labels' order); else the label's text; else the answer itself. One rule for the running history,
    replays and the Psych-201 transcripts."""
    own = getattr(protocol, "answer_words", None)
    if own is not None:
        return own(trial, response)
    options = protocol.queries(trial)[0].options
    for o in options:
        if str(o.label) == str(response):
            return o.continuation
    shown = [str(x) for x in (trial.mat.get("options") or [])]
    if response in shown and len(shown) == len(options):
        return options[shown.index(response)].continuation
    labels = getattr(getattr(protocol, "settings", None), "labels", None) or []
    values = [str(getattr(lab, "value", "")) for lab in labels]
    if response in values and len(values) == len(options):
        return options[values.index(response)].continuation
    for lab in labels:
        if str(getattr(lab, "value", "")) == response:
            return " " + str(lab.text)
    return " " + response if response else ""


def history_entry(protocol: Any, trial: Trial, response: str, feedback: str | None, answer_text: str | None = None,
                  rule: str = RULE) -> HistoryEntry:
    """The history entry of a finished trial. `response`: the answer's value (the table's `response`: the
    model's own, or a person's when a session is replayed); `answer_text`: the model's answer text as its
    Decision wrote it (None: derived from `response`). `rule`: the context rule the session was run with
    (a v2 session's `direct` history kept the sentence without its answer)."""
    own = getattr(protocol, "history_entry", None)
    words = own(trial, response) if own is not None and applies_since(rule, protocol) else None
    if words is not None:  # a protocol that reads the sentence words its answer as the task's question would
        return HistoryEntry(words[0], words[1], feedback)
    question = protocol.queries(trial)[0].prompt
    answer = answer_text if answer_text is not None else option_words(protocol, trial, response)
    return HistoryEntry(question, answer, feedback)


def applies_since(rule: str, protocol: Any) -> bool:
    """Whether a protocol's own `history_entry` wrote the history of a session run under `rule`: from the rule
    it came with (`history_since`; default v3), so a session keeps the history it was run with."""
    since = getattr(protocol, "history_since", "twinlab-context-v3")
    order = {r: k for k, r in enumerate(RULES_READ)}
    return order.get(rule, len(order)) >= order.get(since, 0)


class History:
    """A running session's context, segment by segment (see the module doc for the rule).

    `segments` are committed texts; each is tagged with the trial index it belongs to (None for
    the instructions), so a window can drop old trials while keeping the instructions.
    """

    def __init__(self, exp: Experiment, chat: ChatRenderer | None = None, window: int | None = None,
                 sizes: dict[str, int] | None = None):
        self.exp = exp
        self.sizes = sizes  # trials per block in this session (a block intro's {trials})
        self.chat = chat
        self.window = window
        self.segments: list[tuple[int | None, str]] = []
        self._previous_block: str | None = None
        self._messages: list[dict[str, str]] = []
        self._pending_user = ""  # chat: text that opens the next user turn
        if chat is None:
            for s in preamble_segments(exp):
                self.segments.append((None, s))
        else:
            self._pending_user = "".join(preamble_segments(exp))

    @property
    def text(self) -> str:
        return "".join(s for _, s in self.segments)

    def windowed_text(self, trial_index: int) -> str:
        if not self.window:
            return self.text
        first = trial_index - self.window
        return "".join(s for tag, s in self.segments if tag is None or tag >= first)

    def begin_trial(self, trial: Trial) -> list[str]:
        """Add the block's break/intro texts if `trial` opens a block; returns new committed segments."""
        new = block_start_segments(self.exp, trial, self._previous_block, self.sizes)
        self._previous_block = trial.block
        if self.chat is not None:
            self._pending_user += "".join(new)
            return []
        for s in new:
            self.segments.append((trial.trial_index, s))
        return new

    def trial_context(self, prompt: str) -> str:
        """Text after the committed segments up to where the answer begins."""
        if self.chat is None:
            return prompt
        full = self.chat(self._messages + [{"role": "user", "content": self._pending_user + prompt}], True)
        done = self.text
        if not full.startswith(done):
            raise ContextError("the chat template does not render the session as a growing text; "
                               "run without --chat")
        return full[len(done):]

    def commit(self, trial: Trial, prompt: str, answer_text: str, feedback_text: str | None) -> str:
        """Record the finished trial; returns the new committed segment."""
        return self.commit_entry(trial, HistoryEntry(prompt, answer_text, feedback_text))

    def commit_entry(self, trial: Trial, entry: HistoryEntry) -> str:
        """Record a finished trial's entry (question, answer, feedback); returns the new committed segment."""
        prompt, answer_text, feedback_text = entry.question, entry.answer, entry.feedback
        if self.chat is None:
            seg = prompt + answer_text + "\n" + (feedback_text + "\n" if feedback_text is not None else "")
        else:
            self._messages += [{"role": "user", "content": self._pending_user + prompt},
                               {"role": "assistant", "content": answer_text.strip()}]
            self._pending_user = (feedback_text + "\n") if feedback_text is not None else ""
            full = self.chat(self._messages, False)
            done = self.text
            if not full.startswith(done):
                raise ContextError("the chat template does not render the session as a growing text; "
                                   "run without --chat")
            seg = full[len(done):]
        self.segments.append((trial.trial_index, seg))
        return seg


def static_context(mode: ContextMode, prompt: str, chat: ChatRenderer | None = None) -> str:
    """Context for `none` and `fewshot` modes (the same for every trial but the prompt)."""
    pre = fewshot_text(mode) if mode.kind == "fewshot" else ""
    if chat is None:
        return pre + prompt
    return chat([{"role": "user", "content": pre + prompt}], True)


def option_text(continuation: str, chat: bool) -> str:
    """In a chat turn the answer starts the assistant message: no leading space."""
    return continuation.lstrip(" ") if chat else continuation


# ---------------------------------------------------------------------------------- recovery
# A replay's context mode (model_subjects/replay.py): the running rule over a person's trials and answers.
REPLAY = "replay"
HISTORY_KINDS = ("running", REPLAY)  # modes whose context is a History (the others: `static_context`)
BLOCK_SIZES_KEY = "context_block_sizes"  # the sidecar's record of each run's block sizes (a {trials} intro)


def session_sizes(planned: Sequence[Trial]) -> dict[str, int]:
    """The block sizes a session's block intros fill `{trials}` with: the trials per block of the trials the
    run plans (its sequence cut to --trials, or a person's trials for a replay). Recorded in the sidecar
    (`record_block_sizes`) so that `twinlab context` rebuilds with the very numbers the run used."""

    return block_sizes(planned)


def record_block_sizes(meta: dict[str, Any], from_trial: int, sizes: dict[str, int]) -> bool:
    """Note in a sidecar's metadata the block sizes a run uses from trial `from_trial` on (a resume with
    another --trials fills `{trials}` anew); True when the record changed (the sidecar must be saved)."""
    runs = meta.setdefault(BLOCK_SIZES_KEY, [])
    if runs and runs[-1].get("sizes") == sizes:
        return False
    runs.append({"from_trial": int(from_trial), "sizes": dict(sizes)})
    return True


def recorded_block_sizes(meta: dict[str, Any], trial_index: int) -> dict[str, int] | None:
    """The block sizes the run that wrote trial `trial_index` used (None: the sidecar records none)."""
    runs = [r for r in meta.get(BLOCK_SIZES_KEY) or () if int(r.get("from_trial", 0)) <= trial_index]
    return dict(runs[-1]["sizes"]) if runs else None


def row_trial(exp: Experiment, row: dict[str, Any]) -> Trial:
    """The trial a table row records (a model's row, or a person's row a replay reads)."""
    return Trial.from_dict({**row, "feedback": _as_bool(row["feedback"]), "trial_index": int(row["trial_index"]),
                            "block_trial_index": int(row["block_trial_index"])},  # (a record's own cells: its adapter)
                           factor_names=list(exp.design.factors) if exp.design is not None else ())


def row_feedback(row: dict[str, Any]) -> str | None:
    """The feedback text a row's trial showed (None: none shown; an empty text shown is "")."""
    fb = row.get("feedback_text")
    fb = "" if fb is None or (isinstance(fb, float) and fb != fb) else str(fb)
    shown = row.get("feedback_shown")
    if shown in (None, ""):  # a row without the column: a text means it was shown
        return fb or None
    return fb if _as_bool(shown) else None


def row_entry(protocol: Any, trial: Trial, row: dict[str, Any], rule: str | None = None) -> HistoryEntry:
    """A written row as its history entry: what a resumed run and `rebuild_contexts` commit for it (the run
    committed `history_entry` of the same response, answer text and feedback). A replay's row holds the
    person's answer in `extra.person_response` (its `response` is the model's own best option)."""
    extra = row.get("extra") or "{}"
    extra = json.loads(extra) if isinstance(extra, str) else extra
    answer = extra["person_response"] if "replay_of" in extra else row.get("response")
    return history_entry(protocol, trial, str(answer or ""), row_feedback(row), extra["answer_text"],
                         rule or extra.get("context_rule") or RULE)


def rebuild_contexts(exp: Experiment, rows: Sequence[dict[str, Any]], mode: ContextMode, protocol: Any,
                     chat: ChatRenderer | None = None, sizes: dict[str, int] | None = None) -> list[str]:
    """The context text (before the first option) of every row of one session, from the table.

    Uses only the rows' trial columns, their `response`, `extra.answer_text`, `extra.context_rule` and
    feedback, the spec and the settings recorded in the sidecar. Compare `sha256(text)` with
    `extra.context_sha256`. `protocol`: a Protocol, or its name as `run-model --protocol` takes it
    (e.g. 'meta', 'judgment:meta', 'direct'; resolved for the spec's task by `protocol_for`). `sizes`: the
    block sizes the run filled `{trials}` with (`recorded_block_sizes`); None: the rows' own, which are the
    run's when `rows` are the whole session as planned.
    """
    if isinstance(protocol, str):
        protocol = protocol_for(exp, protocol)
    out: list[str] = []
    ordered = sorted(rows, key=lambda r: int(r["trial_index"]))
    trials = [row_trial(exp, row) for row in ordered]
    if mode.kind not in HISTORY_KINDS:
        return [static_context(mode, protocol.queries(t)[0].prompt, chat) for t in trials]
    hist = History(exp, chat=chat, window=mode.window, sizes=session_sizes(trials) if sizes is None else sizes)
    for row, trial in zip(ordered, trials, strict=False):
        hist.begin_trial(trial)
        out.append(hist.windowed_text(trial.trial_index) + hist.trial_context(protocol.queries(trial)[0].prompt))
        hist.commit_entry(trial, row_entry(protocol, trial, row))
    return out


def protocol_for(exp: Experiment, name: str, question: str | None = None) -> Any:
    """The protocol `run-model --protocol NAME` runs on this spec: a task kind's short name ('meta') or
    its recorded name ('judgment:meta', as the table's `protocol` column holds it), a Lakretz protocol,
    'surprisal'; ProtocolError lists the names when it is none of them."""
    # model_subjects.protocols loads this module back (an import circle)
    from model_subjects.protocols import get_protocol

    return get_protocol(name, question=question, panel=getattr(exp.task, "panel", None), task=exp.task)


def _as_bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)
