"""Model subjects in the panel paradigm: the humans' question and panel labels, running context, sessions, Italian."""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.design_compiler import compile_sequence  # noqa: E402
from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.context import parse_context, rebuild_contexts, sha256  # noqa: E402
from model_subjects.protocols import get_protocol  # noqa: E402
from model_subjects.runner import RunConfig, Runner  # noqa: E402

try:  # shared helpers and fixtures (the repository root, or tests/, is on sys.path)
    from tests.model_subjects.test_model_runner import backend, plain_logprob  # noqa: E402,F401
except ModuleNotFoundError:  # plain `pytest` puts tests/ itself on sys.path
    from test_model_runner import backend, plain_logprob  # noqa: E402,F401

SPEC = "lakretz2021_replication"


def test_running_context_reads_like_the_panel_screen(backend, tmp_path):  # noqa: F811
    exp = load_spec(SPEC)
    Runner(RunConfig(spec=SPEC, out=tmp_path, context="running", trials=5), backend).run()
    rows = read_rows(session_paths(tmp_path, exp.name, "m01", 1)[0])
    assert len(rows) == 5
    panel = exp.task.panel
    proto = get_protocol("panel_judgment", panel=panel)
    texts = rebuild_contexts(exp, rows, parse_context("running"), proto)
    assert [sha256(t) for t in texts] == [json.loads(r["extra"])["context_sha256"] for r in rows]
    for k, (r, text) in enumerate(zip(rows, texts, strict=False)):
        assert r["protocol"] == "panel_judgment" and r["response_mode"] == "panel"
        assert json.loads(r["option_labels"]) == ["VIOLATION", "ACCEPTABLE"]
        assert r["response"] in ("violation", "no_violation")
        assert r["correct"] == str(r["response"] == r["correct_response"])
        # the screen, in order: instructions, the block intro, the sentence, the panel's question and labels
        assert text.startswith(exp.texts.instructions[0].strip()) and exp.block("training").intro_text in text
        assert text.endswith(f"{r['words']}\n{panel.question}\nVIOLATION / ACCEPTABLE:")
        # every earlier trial with the label the model chose and the feedback that earned
        for prev in rows[:k]:
            label = panel.labels[prev["response"]]
            assert (f"{prev['words']}\n{panel.question}\nVIOLATION / ACCEPTABLE: {label}\n"
                    f"{prev['feedback_text']}\n") in text
        # scores: the two labels after exactly that text (independent single forward pass)
        lv, la = json.loads(r["option_logprobs"])
        assert lv == pytest.approx(plain_logprob(backend, text, " VIOLATION"), abs=2e-3)
        assert la == pytest.approx(plain_logprob(backend, text, " ACCEPTABLE"), abs=2e-3)
        assert r["response"] == ("violation" if lv > la else "no_violation")


def test_session_2_continues_and_italian_materials(backend, tmp_path):  # noqa: F811
    exp = load_spec(SPEC)
    Runner(RunConfig(spec=SPEC, out=tmp_path, trials=3, session=2), backend).run()
    rows = read_rows(session_paths(tmp_path, exp.name, "m01", 2)[0])
    seq1, seq2 = (compile_sequence(exp, "m01", session=s) for s in (1, 2))
    assert [r["item_id"] for r in rows] == [t.item_id for t in seq2.trials[:3]]
    assert {r["session"] for r in rows} == {"2"} and not {r["item_id"] for r in rows} & {t.item_id for t in seq1}
    meta = json.loads(session_paths(tmp_path, exp.name, "m01", 2)[1].read_text())
    assert meta["session"] == 2 and meta["sequence_hash"] == seq2.sequence_hash

    ita = load_spec("lakretz2021_italian_example")
    Runner(RunConfig(spec="lakretz2021_italian_example", out=tmp_path, trials=4), backend).run()
    rows = read_rows(session_paths(tmp_path, ita.name, "m01", 1)[0])
    for r in rows:
        assert json.loads(r["option_labels"]) == ["VIOLAZIONE", "ACCETTABILE"]
        units = json.loads(r["rsvp_units"])
        prompt = json.loads(r["extra"])["prompt"]
        assert prompt == f"{' '.join(units)}\n{ita.task.panel.question}\nVIOLAZIONE / ACCETTABILE:"


def test_a_block_intro_tells_the_model_its_number_of_trials(backend, tmp_path):  # noqa: F811
    """{trials} in an intro: the trials this session runs (--trials 3 here), as a participant is told."""
    import yaml

    from experiments.spec import bundled_spec_path

    data = yaml.safe_load(bundled_spec_path(SPEC).read_text(encoding="utf-8"))
    data["blocks"][0]["intro_text"] = "First, a practice block of {trials} sentences."
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    exp = load_spec(spec)
    Runner(RunConfig(spec=str(spec), out=tmp_path / "out", context="running", trials=3), backend).run()
    rows = read_rows(session_paths(tmp_path / "out", exp.name, "m01", 1)[0])
    texts = rebuild_contexts(exp, rows, parse_context("running"), get_protocol("panel_judgment", panel=exp.task.panel))
    assert [sha256(t) for t in texts] == [json.loads(r["extra"])["context_sha256"] for r in rows]
    assert all("First, a practice block of 3 sentences.\n" in t and "{trials}" not in t for t in texts)
