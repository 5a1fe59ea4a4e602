"""Every protocol names its right answer (`Protocol.correct_answer`), and names what the decision step scores correct.

The reference is the rule the weight learner used before protocols named their answers, kept here as it was: feed
the decision step invented scores, each option preferred in turn (the same option in every query), and take the
first decision scored correct (`probed`). On real trials compiled from every bundled example spec, for every
protocol each kind registers, the named answer equals the probed one, on the trials as compiled and on copies
without a right answer (the item's answer taken away) or with the choice options reversed.

Where a trial's queries order the options differently (`choice:meta` lists them as given and reversed; Hu & Levy's
`sentence_comparison:Meta*` puts the grammatical sentence first, then second), preferring "the same option in every
query" never prefers the right one in both, so the old probe found no right answer. There the reference is the
probe over every combination of preferred options (`probed_every_way`), and only those protocols may differ from
the old probe (`BLIND`).
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from experiments.trials import Trial, freeze_pairs
from model_subjects.context import RULE, history_entry
from model_subjects.decisions import Scored, decide
from model_subjects.protocol_base import Protocol, ProtocolError
from model_subjects.protocols import get_protocol
from model_subjects.requests import LoglikelihoodResult
from model_subjects.tasks.registry import model_kinds, protocol_names
from model_subjects.weight_runs import correct_entry

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
BLIND = {"choice:meta", "sentence_comparison:MetaQuestionSimple",
         "sentence_comparison:MetaInstruct", "sentence_comparison:MetaQuestionComplex"}
Pair = tuple[str, str] | None  # (response, answer_text), or no right answer


def _decided(proto: Protocol, trial: Trial, preferred: tuple[int, ...]) -> Any:
    """The decision step on invented scores: option `preferred[q]` of query q scores 0, every other -10."""
    qs = proto.queries(trial)
    scores = [[0.0 if j == i else -10.0 for j in range(len(q.options))] for q, i in zip(qs, preferred, strict=True)]
    results = [[LoglikelihoodResult(x, j == i, 1, (x,)) for j, x in enumerate(row)]
               for row, i in zip(scores, preferred, strict=True)]
    gen = qs[0].options[preferred[0]].continuation if proto.generates else ""
    return decide(proto, trial, Scored(scores, results, gen))


def probed(proto: Protocol, trial: Trial) -> Pair:
    """The old rule (model_subjects/weight_runs.py `correct_entry` before protocols named their answers): each
    option preferred in turn, the same in every query; the first decision scored correct."""
    if proto.measures:
        return None  # a measuring protocol (surprisal) has no answer to teach
    qs = proto.queries(trial)
    n = min(len(q.options) for q in qs) if qs else 0
    for i in range(n):
        d = _decided(proto, trial, (i,) * len(qs))
        if d.correct:
            return d.response, d.answer_text
    return None


def probed_every_way(proto: Protocol, trial: Trial) -> Pair:
    """The probe over every combination of one preferred option per query, in order: the first scored correct."""
    if proto.measures:
        return None
    qs = proto.queries(trial)
    ways = list(itertools.product(*(range(len(q.options)) for q in qs)))
    assert len(ways) <= 4096, (proto.name, len(ways))
    for preferred in ways:
        d = _decided(proto, trial, preferred)
        if d.correct:
            return d.response, d.answer_text
    return None


def named(proto: Protocol, trial: Trial) -> Pair:
    a = proto.correct_answer(trial)
    return None if a is None else (a.response, a.answer_text)


def spec_names() -> dict[str, list[str]]:
    """The bundled example specs by their task kind."""
    out: dict[str, list[str]] = {}
    for path in sorted(SPECS.glob("*.yaml")):
        kind = (yaml.safe_load(path.read_text(encoding="utf-8")).get("task") or {}).get("kind")
        out.setdefault(str(kind), []).append(path.stem)
    return out


def cases() -> list[tuple[str, str]]:
    """(kind, protocol) for every protocol every registered kind offers on a bundled spec of it."""
    specs = spec_names()
    return list(dict.fromkeys((kind, p) for kind in model_kinds() for name in specs.get(kind, [])
                              for p in protocol_names(kind, load_spec(name).task)))


def without_answer(t: Trial) -> Trial:
    """The trial with no right answer: a study record's `correct_response` emptied, a design's `answer` dropped."""
    if t.record_module is not None:
        return t.with_materials(correct_response="")
    return dataclasses.replace(t, materials=freeze_pairs({k: v for k, v in t.mat.items() if k != "answer"}))


def partners(exp: Any) -> dict[str, str]:
    """Each sentence's minimal-pair partner: the other sentence of its item, over the lists (a design's items give
    the pair as two conditions; `judgment:direct` compares a sentence with its `pair_sentence`)."""
    by_item: dict[str, set[str]] = {}
    for subject in ("m01", "m02", "m03", "m04"):
        for t in compile_sequence(exp, subject, None).trials:
            if t.item and t.mat.get("sentence"):
                by_item.setdefault(t.item, set()).add(str(t.mat["sentence"]))
    pairs = [sorted(v) for v in by_item.values() if len(v) == 2]
    return {a: b for x, y in pairs for a, b in ((x, y), (y, x))}


def variants(trials: list[Trial], pair_of: dict[str, str]) -> Iterator[tuple[str, Trial]]:
    for t in trials:
        yield "as compiled", t
        yield "no answer", without_answer(t)
        if isinstance(t.mat.get("options"), (list, tuple)):
            yield "options reversed", t.with_materials(options=tuple(reversed(t.mat["options"])))
        partner = pair_of.get(str(t.mat.get("sentence")))
        if partner and not t.mat.get("pair_sentence"):
            paired = t.with_materials(pair_sentence=partner)
            yield "paired", paired
            yield "paired, no answer", without_answer(paired)


@functools.cache
def compiled(spec: str) -> tuple[Any, tuple[tuple[str, Trial], ...]]:
    """The spec and its trials (one subject's, each with its variants), compiled once for every protocol."""
    exp = load_spec(spec)
    return exp, tuple(variants(list(compile_sequence(exp, "m01", None).trials), partners(exp)))


def outcomes(kind: str, name: str) -> Counter[str]:
    """Per variant, how many trials got an answer and how many none, each checked against the reference."""
    seen: Counter[str] = Counter()
    for spec in spec_names()[kind]:
        exp, trials = compiled(spec)
        if name not in protocol_names(kind, exp.task):
            continue
        proto = get_protocol(name, panel=exp.task.panel, task=exp.task)
        for how, t in trials:
            try:
                proto.check(t)  # the runner refuses a trial its protocol cannot ask before any is scored
            except ProtocolError:
                seen["refused"] += 1
                continue
            old, new = probed(proto, t), named(proto, t)
            if old is None and new is not None:
                assert proto.name in BLIND, (spec, how, t.item_id, new)
                old = probed_every_way(proto, t)
                seen["where the old probe was blind"] += 1
            assert new == old, (spec, how, t.item_id, proto.name)
            seen[f"{how}: {'answer' if new else 'none'}"] += 1
            entry = correct_entry(proto, t, RULE)  # what the weight learner teaches
            assert entry == (None if new is None else history_entry(proto, t, new[0], None, new[1], RULE))
    return seen


def test_every_kind_with_protocols_has_a_bundled_spec():
    assert set(model_kinds()) <= set(spec_names()), set(model_kinds()) - set(spec_names())


@pytest.mark.parametrize(("kind", "name"), cases())
def test_the_named_answer_is_the_probed_one(kind: str, name: str):
    seen = outcomes(kind, name)
    assert sum(n for k, n in seen.items() if k != "refused"), seen  # some trial was compared


@pytest.mark.parametrize(("kind", "name"), [("violation_detection", "violation_judgment"),
                                            ("violation_detection", "panel_judgment"), ("judgment", "meta"),
                                            ("choice", "direct"), ("choice", "meta"), ("lexical_decision", "meta")])
def test_trials_with_and_without_right_answers(kind: str, name: str):
    """Protocols that read the item's answer: every compiled trial has one, none once it is taken away."""
    seen = outcomes(kind, name)
    assert seen["as compiled: answer"] > 0 and seen["as compiled: none"] == 0, seen
    assert seen["no answer: none"] == seen["as compiled: answer"] and seen["no answer: answer"] == 0, seen


@pytest.mark.parametrize(("kind", "name"), [("rating", "meta"), ("rating", "direct"), ("lexical_decision", "direct"),
                                            ("completion", "direct"), ("self_paced_reading", "surprisal")])
def test_measuring_protocols_name_no_answer(kind: str, name: str):
    seen = outcomes(kind, name)
    assert seen["as compiled: none"] > 0 and seen["as compiled: answer"] == 0, seen


def test_the_old_probe_was_blind_where_the_orders_differ():
    """Hu & Levy's comparison in both orders and choice's reversed order: the probe found no right answer where
    one exists; the protocol names it (the decision step scores it correct: `probed_every_way`)."""
    assert outcomes("violation_detection", "sentence_comparison:MetaInstruct")["where the old probe was blind"] > 0
    assert outcomes("choice", "meta")["where the old probe was blind"] > 0
