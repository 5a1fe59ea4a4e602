"""Twins, with the bundled model's real scores: context `none` likelihoods equal the model's own
sessions, replay sessions read the people's own answers and feedback, a replay of another spec is refused.

One shared set-up (module scope): two people of acceptability_yesno, two `none` model subjects, a replay of
the people's first 4 trials (practice with feedback, then test)."""
from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from twins_people import write_people  # noqa: E402

from analysis import api  # noqa: E402
from analysis.twins.answers import likelihood  # noqa: E402
from experiments.session import read_rows  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.people import find_people  # noqa: E402
from model_subjects.replay import run_replay  # noqa: E402
from model_subjects.runner import RunConfig, RunError, run_models  # noqa: E402

SPEC = "acceptability_yesno"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, bundled_backend):
    out = tmp_path_factory.mktemp("twins")
    exp = load_spec(SPEC)
    write_people(exp, out / "people", ["P01", "P02"])
    run_models(RunConfig(spec=SPEC, out=out / "none", subjects=2, protocol="meta"), backend=bundled_backend)
    for n in (2, 4):  # the second run resumes the first (its later trials' histories are checked below)
        run_replay(RunConfig(spec=SPEC, out=out / "replay", protocol="meta", trials=n), out / "people",
                   backend=bundled_backend)
    return out, exp


def test_none_likelihood_equals_the_model_sessions_own_probabilities(runs):
    out, _ = runs
    df = api.load_sessions([out / "people", out / "none"])
    lk = likelihood(df, n_boot=50)
    t = lk.trials
    assert len(t) == 20 and lk.missing.empty  # every person's trial, each item run by one of the two subjects
    model = pd.concat([pd.read_csv(f) for f in sorted((out / "none" / "data").glob("*.csv"))])
    people = pd.concat([pd.read_csv(f) for f in sorted((out / "people" / "data").glob("*.csv"))])
    for _, r in t.iterrows():
        m = model[model["item_id"] == r["item_id"]]
        assert m["option_logprobs"].nunique() == 1  # context none: the same item scores the same
        lp = np.array(json.loads(m["option_logprobs"].iloc[0]))
        labels = json.loads(m["option_labels"].iloc[0])
        p = people[(people["subject_id"] == r["person"].split(":")[-1]) & (people["item_id"] == r["item_id"])]
        want = lp[labels.index(p["response"].iloc[0])] - math.log(np.exp(lp).sum())
        assert r["loglik"] == pytest.approx(want, abs=1e-6)


def _expected_context(exp, people_rows, k: int, prompt_of) -> str:
    """Trial k's context written out by hand: instructions, block intros, each earlier trial's prompt, the
    PERSON's answer label and the feedback the person got."""
    labels = {lab.value: lab.text for lab in exp.task.settings().labels}
    sizes = {}
    for r in people_rows:
        sizes[r["block"]] = sizes.get(r["block"], 0) + 1
    text = "".join(p.strip() + "\n" for p in exp.texts.instructions)
    block = None
    for r in people_rows[:k + 1]:
        if r["block"] != block:
            block = r["block"]
            text += exp.block(block).intro_text.replace("{trials}", str(sizes[block])).strip() + "\n"
        text += prompt_of(r)
        if r is people_rows[k]:
            return text
        text += " " + labels[r["response"]] + "\n"
        if r["feedback_shown"] == "True":
            text += r["feedback_text"] + "\n"
    raise AssertionError


def test_replay_rows_follow_each_person_with_their_answers_in_the_history(runs):
    out, exp = runs
    for pid in ("P01", "P02"):
        prow = read_rows(next((out / "people" / "data").glob(f"*subject-{pid}_*.csv")))
        rf = next((out / "replay" / "data").glob(f"*replay{pid}_session-1_data.csv"))
        rows = read_rows(rf)
        side = json.loads(rf.with_suffix(".json").read_text())
        assert side["replay"]["person"] == pid and side["context_mode"] == "replay" and len(side["resumes"]) == 1
        assert [r["item_id"] for r in rows] == [r["item_id"] for r in prow[:4]]  # the person's order
        assert {r["context_mode"] for r in rows} == {"replay"}
        for k, r in enumerate(rows):
            extra = json.loads(r["extra"])
            assert extra["replay_of"] == pid and extra["person_response"] == prow[k]["response"]
            want = _expected_context(exp, prow, k, lambda x: f"{json.loads(x['materials'])['sentence']}\n"
                                     f"{exp.task.settings().question} (Acceptable / Not acceptable)\nAnswer:")
            assert extra["context_sha256"] == hashlib.sha256(want.encode()).hexdigest(), (pid, k)
        # and the table alone recovers every context by the running rule (the person's answers are the rows')
        from model_subjects.context import ContextMode, rebuild_contexts, sha256
        from model_subjects.protocols import get_protocol

        proto = get_protocol("meta", panel=exp.task.panel, task=exp.task)
        assert [sha256(c) for c in rebuild_contexts(exp, rows, ContextMode("running"), proto)] == \
            [json.loads(r["extra"])["context_sha256"] for r in rows]


def test_replay_likelihood_and_never_counted_as_people_or_models(runs):
    out, _ = runs
    df = api.load_sessions([out / "people", out / "none", out / "replay"])
    lk = likelihood(df, n_boot=50)
    assert df[df["context_mode"] == "replay"]["subject_key"].nunique() == 2  # each replay its own subject
    assert not any("replay" in n and "copies" in n for n in df.attrs["load_info"].notes)
    rep = lk.trials[lk.trials["context"] == "replay"]
    assert len(rep) == 8 and rep["person"].nunique() == 2
    rows = pd.concat([pd.read_csv(f) for f in sorted((out / "replay" / "data").glob("*.csv"))])
    for _, r in rep.iterrows():
        x = rows[(rows["item_id"] == r["item_id"]) & rows["subject_id"].str.endswith(r["person"].split(":")[-1])]
        lp = np.array(json.loads(x["option_logprobs"].iloc[0]))
        k = json.loads(x["option_labels"].iloc[0]).index(r["answer"])
        assert r["loglik"] == pytest.approx(lp[k] - math.log(np.exp(lp).sum()), abs=1e-6)
    res = api.report(df, out / "report", n_boot=200)
    sizes = pd.read_csv(out / "report" / "tables" / "sample_sizes.csv")
    assert not sizes["group"].str.contains("replay").any()  # not an ordinary model group, nor people
    assert sizes.set_index("group").loc["human", "subjects"] == 2
    tw = pd.read_csv(out / "report" / "tables" / "twins_likelihood.csv")
    assert set(tw["context"]) == {"none", "replay"}
    html = (out / "report" / "report.html").read_text()
    assert "Twins: the model as a model of the people" in html and res is not None
    # the learning sections are people's and model groups': the 2 replays (8 rows) are named, not shown
    for name in ("learning_first_encounter", "learning_curves"):
        groups = set(pd.read_csv(out / "report" / "tables" / f"{name}.csv")["group"].astype(str))
        assert "human" in groups and not any("replay" in g for g in groups), (name, groups)
    assert html.count("Replays (2 subject(s), 8 row(s)) are left out here") >= 2
    assert "they are in the Twins sections" in html


def test_replay_of_another_spec_is_refused_naming_both(runs, tmp_path):
    out, _ = runs
    with pytest.raises(RunError, match=r"run on spec 'acceptability_yesno' \(spec hash \w+\); this run's spec is "
                                       r"'agreement_attraction'"):
        find_people(out / "people", load_spec("agreement_attraction"))
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", "agreement_attraction", "--replay",
                        str(out / "people"), "--out", str(tmp_path / "x")], capture_output=True, text=True,
                       cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and "spec hash" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", SPEC, "--replay", str(out / "people"),
                        "--subjects", "3", "--out", str(tmp_path / "y")], capture_output=True, text=True,
                       cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and "--subjects" in r.stderr and not (tmp_path / "y").exists()


def test_people_jsonl_marks_each_persons_answers_with_rts(runs, tmp_path):
    out, exp = runs
    f = tmp_path / "people.jsonl"
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "experiments.cli", "people-jsonl", SPEC, str(out / "people"), "--out", str(f),
           "--protocol", "meta"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    assert [x["participant"] for x in lines] == ["P01", "P02"]
    labels = {lab.value: lab.text for lab in exp.task.settings().labels}
    for x in lines:
        prow = read_rows(next((out / "people" / "data").glob(f"*subject-{x['participant']}_*.csv")))
        import re
        assert re.findall(r"<<(.*?)>>", x["text"]) == [labels[r["response"]] for r in prow]
        assert [t["rt_ms"] for t in x["trials"]] == [float(r["rt_ms"]) for r in prow]
        assert x["text"].startswith(exp.texts.instructions[0].strip())
    r2 = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert r2.returncode == 2 and "--force" in r2.stderr


def test_replay_scores_a_typed_word_as_typed_in_the_persons_history(bundled_backend, tmp_path):
    """Cloze: the replay's log P(the person's word) equals the model's score of that word after the context
    rebuilt from the replay's table (an independent request to the backend)."""
    from model_subjects.context import ContextMode, rebuild_contexts
    from model_subjects.protocols import get_protocol
    from model_subjects.requests import LoglikelihoodRequest

    exp = load_spec("cloze")
    write_people(exp, tmp_path / "people", ["P01"], p_right=0.4)
    run_replay(RunConfig(spec="cloze", out=tmp_path / "r", protocol="direct", trials=3), tmp_path / "people",
               backend=bundled_backend)
    rows = read_rows(next((tmp_path / "r" / "data").glob("*.csv")))
    proto = get_protocol("direct", panel=exp.task.panel, task=exp.task)
    ctx = rebuild_contexts(exp, rows, ContextMode("running"), proto)
    for c, r in zip(ctx, rows, strict=False):
        extra = json.loads(r["extra"])
        want = bundled_backend.loglikelihood_alone([LoglikelihoodRequest(c, " " + extra["person_word"])])[0].logprob
        assert extra["person_word_logprob"] == pytest.approx(want, abs=2e-4)


def test_a_persons_answer_in_the_task_words_for_each_protocol():
    """What a replay's history shows for the person's answer: the model's own history rule (context.history_entry)
    with the person's answer: meta the label's text, direct the task's question answered with the label,
    a choice asked by number its number."""
    import dataclasses

    from experiments.design_compiler import compile_sequence
    from model_subjects.person_marks import answer_words
    from model_subjects.protocols import get_protocol

    exp = load_spec(SPEC)
    t = compile_sequence(exp, "P01").trials[-1]
    t = dataclasses.replace(t, materials=tuple(sorted(dict(t.materials, pair_sentence="The X is here.").items())))
    meta, direct = (get_protocol(p, panel=exp.task.panel, task=exp.task) for p in ("meta", "direct"))
    assert (answer_words(meta, t, "yes"), answer_words(meta, t, "no")) == (" Acceptable", " Not acceptable")
    from model_subjects.context import history_entry

    assert (answer_words(direct, t, "yes"), answer_words(direct, t, "no")) == (" Acceptable", " Not acceptable")
    assert all(answer_words(direct, t, v) == history_entry(direct, t, v, None).answer for v in ("yes", "no"))
    mp = load_spec("minimal_pairs_2afc")
    c = compile_sequence(mp, "P01").trials[-1]
    second = str(c.mat["options"][1])
    assert answer_words(get_protocol("meta", panel=mp.task.panel, task=mp.task), c, second) == " 2"
    assert answer_words(get_protocol("direct", panel=mp.task.panel, task=mp.task), c, second).strip() == second


def test_a_direct_replay_shows_the_persons_answers_and_its_table_rebuilds_every_context(tmp_path, bundled_backend):
    """`direct`: a replay's history holds the person's
    answer, never the model's own best option (the row's `response`), and the table recovers every context."""
    from experiments.session import read_rows
    from model_subjects.context import ContextMode, rebuild_contexts, sha256
    from model_subjects.protocols import get_protocol
    from tests.model_subjects.test_history_context import write_spec

    spec = write_spec(tmp_path / "spec")
    exp = load_spec(str(spec))
    write_people(exp, tmp_path / "people", ["P01"], p_right=0.5)
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "d", protocol="direct"), tmp_path / "people",
               backend=bundled_backend)
    proto = get_protocol("direct", panel=exp.task.panel, task=exp.task)
    rows = [r for csv in sorted((tmp_path / "d" / "data").glob("*.csv")) for r in read_rows(csv)]
    ctx = rebuild_contexts(exp, rows, ContextMode("running"), proto)
    assert [sha256(c) for c in ctx] == [json.loads(r["extra"])["context_sha256"] for r in rows]
    words = {"yes": "Acceptable", "no": "Not acceptable"}
    for k, r in enumerate(rows[:-1]):  # every earlier trial: the person's answer in the task's words
        person = json.loads(r["extra"])["person_response"]
        assert f"(Acceptable / Not acceptable)\nAnswer: {words[person]}\n" in ctx[k + 1], (k, ctx[k + 1][-300:])


def test_a_replay_resumed_after_the_persons_file_changed_is_refused_naming_it(bundled_backend, tmp_path):
    """The replay's sidecar records the SHA-256 of the person's table; a resume after the table changed (here a
    valid edit, an RT, which the people's check accepts) is refused naming the file, nothing written; the
    table put back as it was, the resume goes on."""
    import re

    exp = load_spec(SPEC)
    write_people(exp, tmp_path / "people", ["P01"])
    person = next((tmp_path / "people" / "data").glob("*_data.csv"))
    original = person.read_bytes()
    cfg = lambda n: RunConfig(spec=SPEC, out=tmp_path / "r", protocol="meta", trials=n)  # noqa: E731
    run_replay(cfg(2), tmp_path / "people", backend=bundled_backend)
    rf = next((tmp_path / "r" / "data").glob("*_data.csv"))
    assert json.loads(rf.with_suffix(".json").read_text())["replay"]["person_sha256"] == \
        hashlib.sha256(original).hexdigest()
    rows = original.decode().split("\n")
    rt = rows[0].split(",").index("rt_ms")
    cells = rows[-2].split(",")  # the last row (no quoted commas before rt_ms in this spec's rows)
    cells[rt] = "999.9"
    person.write_bytes("\n".join(rows[:-2] + [",".join(cells), ""]).encode())
    assert len(find_people(tmp_path / "people", exp)[0].rows) == 10  # still a valid session
    kept = {f.name: f.read_bytes() for f in (tmp_path / "r" / "data").iterdir() if f.suffix in (".csv", ".json")}
    with pytest.raises(RunError, match=rf"the person's file {re.escape(str(person))} changed since this replay"):
        run_replay(cfg(4), tmp_path / "people", backend=bundled_backend)
    assert {f.name: f.read_bytes() for f in (tmp_path / "r" / "data").iterdir() if f.suffix in (".csv", ".json")} \
        == kept
    person.write_bytes(original)
    run_replay(cfg(4), tmp_path / "people", backend=bundled_backend)
    assert len(read_rows(rf)) == 4
