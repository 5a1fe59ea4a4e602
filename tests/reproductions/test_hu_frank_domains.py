"""Seeds/002's four domains on a user's model: the importers of the released stimuli, the authors' parsers
against hand-coded answers (and, with ../shared, against every production the authors parsed), the
forced-choice scores against a plain transformers forward pass, and the --data run end to end."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reproductions.common import ReproError
from reproductions.hu_frank import scoring as S
from reproductions.hu_frank import stimuli as st
from tests.support.hu_frank_release import MODELS, write_release, write_stimuli

ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" / "data" / "hu_frank2024" for p in (ROOT.parent, ROOT.parents[1])
               if (p / "shared" / "data" / "hu_frank2024" / "output").is_dir()), None)
needs_shared = pytest.mark.skipif(SHARED is None, reason="../shared/data/hu_frank2024 is absent")


# ------------------------------------------------------------------------------------ parsers by hand
@pytest.mark.parametrize("text, digits, valid", [
    ("3]\n[2] [2] [", [3], True), ("1 5 6]", [1, 5, 6], True), (" 7 ]", [7], True), ("3", [3], True),
    ("3 x]", [3], False), ("\n3]", [], False), ("]", [], True), ("12]", [1, 2], True)])
def test_digit_answer_set_by_hand(text, digits, valid):
    assert S.digit_answer_set(text) == (digits, valid)


def test_digit_correct_by_hand():
    assert S.digit_correct("3]", [3], False)
    assert not S.digit_correct("4]", [3], False)
    assert not S.digit_correct("3 3]", [3], False)  # length differs
    assert S.digit_correct("9 7]", [7, 9], True) and not S.digit_correct("9 7]", [7, 9], False)
    assert not S.digit_correct("7 9\n]", [7, 9], True)  # a newline before "]" makes the answer invalid


CRT1 = {"correct": "$20.00", "intuitive": "$40.00", "total_cost": "$140.00", "more": "$100.00", "correct_alt": "$20",
        "intuitive_alt": "$40", "total_cost_alt": "$140", "more_alt": "$100"}


@pytest.mark.parametrize("raw, code, lenient", [
    (" The fridge costs $20.\n\nQuestion: ...", "correct", True),
    (" $40", "intuitive", False),
    (" The fridge costs $100.", "other", False),  # "more": another option, coded other
    (" I don't know.", "other", False),
    ("\nThe fridge costs $20.", "other", True),  # strict: the first line is empty; lenient: first non-empty line
    (" 20", "correct", False),  # a bare number is written as money first ("$20.00"); lenient needs the "$"
    (" It costs 20", "other", False),  # text around a number without "$": no amount is found
    (" $40. No wait, $20.", "intuitive", True),  # strict: cut at the first period; lenient: anywhere in the line
])
def test_crt1_codes_by_hand(raw, code, lenient):
    label, _ = S.crt_label(raw, CRT1, "crt1")
    assert S.crt_code(label) == code
    assert S.crt_lenient(raw, CRT1, "crt1") is lenient


def test_crt2_text_answers_by_hand():
    opts = {"correct": "5 minutes", "intuitive": "100 minutes"}
    assert S.crt_code(S.crt_label(" 5 minutes.", opts, "crt2")[0]) == "correct"
    assert S.crt_code(S.crt_label(" It takes 100 minutes", opts, "crt2")[0]) == "intuitive"
    assert S.clean_crt(" 1.5 days") == "1."  # the authors' cut at the first period, kept as they do


# ------------------------------------------------------------------------------------ importers
def test_digit_matrix_prompt_and_choices_by_hand(tmp_path):
    write_stimuli(tmp_path)
    items = st.digit_matrices(tmp_path / "external_stimuli" / "digit_mat" / "all_problems.npz")
    assert [i.item for i in items] == ["row_constant_0", "c2_set_union_0", "row_constant_1", "c2_set_union_1",
                                       "row_constant_2"]  # problem index first, then type (the authors' loop)
    assert items[0].prompt == "[6] [6] [6]\n[1] [1] [1]\n[3] [3] ["
    assert items[1].prompt == "[1 2] [3  ] [1 3]\n[4 5] [6  ] [4 6]\n[7 8] [9  ] ["  # -1 is written as a space
    assert items[0].options["3"] == "3]" and items[0].correct == "3"
    assert items[1].options["0"] == "9 7]" and items[1].extra["perm_invariant"] is True
    assert items[3].extra["correct_answer"] == [7, 9]


def test_crt_blimp_dgl_importers(tmp_path):
    ext = write_stimuli(tmp_path) / "external_stimuli"
    crt = st.crt(ext / "crt" / "stimuli.csv")
    assert crt[0].options["correct"] == "$20.00" and crt[0].options["correct_alt"] == "$20"
    assert (crt[0].options["more"] == "$100.00" and crt[0].prompt.startswith("Question: A pear")
            and crt[0].prompt.endswith("\nAnswer:"))
    assert crt[2].options == {"correct": "47 days", "intuitive": "24 days", "t": "12 days"}
    dgl = st.dgl(ext / "dgl" / "stimuli.csv")
    assert len(dgl) == 1 and dgl[0].options == {"good": "The executive doubted "
                                                        "himself.", "bad": "The executive doubted themselves."}
    assert dgl[0].extra["bad_first"].endswith("Sentence 1: The executive doubted themselves.\n"
                                              "Sentence 2: The executive doubted himself.\nAnswer:")
    assert dgl[0].extra["good_first"].startswith("\nWhich of the following two sentences is more grammatically correct")
    b = st.blimp(ext / "blimp" / "stimuli.csv")
    assert [i.item for i in b] == ["blimp:1", "blimp:2"]
    j = st.blimp_jsonl(ext / "blimp" / "raw" / "causative.jsonl.gz")
    assert j[0].options["bad"] == "Aaron appeared the glass." and j[0].item == "blimp:causative-0"


def test_importers_refuse_naming_file_field_and_line(tmp_path):
    ext = write_stimuli(tmp_path) / "external_stimuli"
    p = ext / "dgl" / "stimuli.csv"
    p.write_text(p.read_text().replace("The executive doubted themselves", ""))
    with pytest.raises(ReproError, match=r"stimuli\.csv: line 2: field sentence_ungrammatical is empty"):
        st.dgl(p)
    j = ext / "blimp" / "raw" / "bad.jsonl"
    j.write_text('{"sentence_good": "A."}\n')
    with pytest.raises(ReproError, match=r"bad\.jsonl: line 1: field sentence_bad"):
        st.blimp_jsonl(j)


# ------------------------------------------------------------------------------------ the authors' own parses
@needs_shared
def test_digit_parser_equals_every_released_production():
    files = sorted((SHARED / "output" / "digit_mat").glob("*.csv.gz"))
    n = 0
    for f in files[:6]:
        df = pd.read_csv(f)
        for r in df.itertuples():
            ans = [int(c) for c in str(r.correct_answer) if c.isdigit()]
            assert S.digit_correct(str(r.generated_response), ans, bool(r.perm_invariant)) == bool(
                r.generated_response_correct), (f.name, r.problem_id)
            n += 1
    assert n > 5000


@needs_shared
def test_crt_parser_equals_the_authors_naive_labels():
    n, differ = 0, []
    for f in sorted((SHARED / "output" / "crt").glob("crt*/*.csv.gz")):
        df = pd.read_csv(f, keep_default_na=False, dtype=str)
        naive = [c for c in df.columns if c.startswith("generated_response_naive_label")][0]
        cond = f.parent.name
        labels = [c for c in ("correct", "intuitive", "total_cost", "more", "correct_alt", "intuitive_alt",
                              "total_cost_alt", "more_alt", "t")
                  if c in df.columns and (cond != "crt2" or c in ("correct", "intuitive"))]
        for r in df.to_dict("records"):
            opts = {k: r[k] for k in labels if r[k] != ""}
            label, cleaned = S.crt_label(r["generated_response_raw"], opts, cond)
            assert cleaned == r["generated_response"], (f, r["item_id"])
            if label != r[naive]:
                differ.append((f.parent.name, f.name, r["item_id"], label, r[naive]))
            n += 1
    # 1948 of 1950 agree; the two others ("$10" in crt1/pythia-1.4b item 34, "t" in one crt3 answer) match an
    # option by the authors' published code but carry no naive label in their files (an earlier code version)
    assert n == 1950 and len(differ) <= 2, differ


@needs_shared
def test_released_stimuli_give_the_authors_items_and_choices():
    items = st.load_all(SHARED)
    assert len(items["digit_mat"]) == 1216 and len(items["crt"]) == 150 and len(items["lambada"]) == 5153
    assert len(items["syntax"]) == 725  # 650 BLiMP + 75 DGL pairs (the duplicated ones left out)
    df = pd.read_csv(SHARED / "output" / "digit_mat" / "gemma-2b.csv.gz")
    by = {i.item: i for i in items["digit_mat"]}
    for r in df.itertuples():
        assert by[r.problem_id].options[str(r.mc_response_index)] == r.mc_response
    assert [i.item for i in items["digit_mat"]][:len(df)] == df["problem_id"].tolist()


# ------------------------------------------------------------------------------------ the bundled model
@pytest.fixture(scope="module")
def backend():
    from model_subjects import load_backend

    return load_backend(None, threads=1)


def _plain(b, context: str, continuation: str) -> list[float]:
    """Token log-probs of `continuation` after `context`: one plain forward pass, tokenisation written out
    (trailing context spaces go to the continuation; the whole text is encoded and split; the start token only
    for an empty context)."""
    import torch

    k = len(context) - len(context.rstrip(" "))
    if k:
        context, continuation = context[:-k], context[-k:] + continuation
    tok = b.tokenizer
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    cont = tok(context + continuation, add_special_tokens=False)["input_ids"][len(ctx):]
    start = [] if ctx else [tok.bos_token_id]
    with torch.no_grad():
        lp = torch.log_softmax(b.model(input_ids=torch.tensor([start + ctx + cont])).logits[0].double(), -1)
    n = len(start) + len(ctx)
    return [lp[n - 1 + j, t].item() for j, t in enumerate(cont)]


@pytest.mark.model
@pytest.mark.slow
def test_forced_choice_scores_equal_a_plain_forward_pass(backend, tmp_path):
    from reproductions.hu_frank import run as R

    ext = write_stimuli(tmp_path) / "external_stimuli"
    dig = st.digit_matrices(ext / "digit_mat" / "all_problems.npz")[:2]
    out = R.run_digit(backend, dig)
    for it, r in zip(dig, out.itertuples(), strict=False):
        want = [sum(_plain(backend, it.prompt, it.options[str(a)])) for a in range(8)]
        assert np.allclose(r.mc_answer_logprobs, want, atol=1e-4)
        assert r.mc_response_index == int(np.argmax(want))
    # the empty set's "]" merges with the context's final "[" into one token: scored as
    # log P("[]") - log P("[") from the context before the bracket
    ctx = "[6 4] [1 9] [6 4 1 9]\n[2] [3] [2 3]\n[5] [ ] ["
    empty = st.Item("digit_mat", "digit_mat", "x", prompt=ctx, correct="0",
                    options={str(a): t for a, t in enumerate(["]", "1]", "2]", "3]", "4]", "5]", "6]", "7]"])},
                    extra={"correct_answer": [], "perm_invariant": True, "problem_type": "x"})
    out = R.run_digit(backend, [empty])
    assert out["mc_choices_merging_with_bracket"].iloc[0] == 1
    want = sum(_plain(backend, ctx[:-1], "[]")) - sum(_plain(backend, ctx[:-1], "["))
    assert out["mc_answer_logprobs"].iloc[0][0] == pytest.approx(want, abs=1e-4)
    assert out["mc_answer_logprobs"].iloc[0][1] == pytest.approx(sum(_plain(backend, ctx, "1]")), abs=1e-4)
    crt = st.crt(ext / "crt" / "stimuli.csv")
    out = R.run_crt(backend, crt)
    for it, r in zip(crt, out.itertuples(), strict=False):
        c = _plain(backend, it.prompt + " ", it.options["correct"])
        assert r.mc_correct_logprob == pytest.approx(np.mean(c), abs=1e-4)  # mean per token, as the paper
        assert r.mc_intuitive_logprob == pytest.approx(
            np.mean(_plain(backend, it.prompt + " ", it.options["intuitive"])), abs=1e-4)
    pairs = st.dgl(ext / "dgl" / "stimuli.csv") + st.blimp(ext / "blimp" / "stimuli.csv")
    out = R.run_syntax(backend, pairs)
    for it, r in zip(pairs, out.itertuples(), strict=False):
        assert r.direct_sum_logprob_good_sentence == pytest.approx(sum(_plain(backend, "", it.options["good"])),
                                                                   abs=1e-3)
        g1 = sum(_plain(backend, it.extra["good_first"] + " ", "1"))
        g2 = sum(_plain(backend, it.extra["good_first"] + " ", "2"))
        assert r.meta_sum_logprob_good_first_1 == pytest.approx(g1, abs=1e-4) and r.meta_good_correct == (g1 > g2)
    lam = [st.Item("lambada", "lambada", "0", prompt="The cat sat on the", correct="mat",
                   extra={"meta_prompt": st.META_PROMPT_LAMBADA.format(prefix="The cat sat on the")})]
    out = R.run_lambada(backend, lam)
    assert out["direct_logprob"].iloc[0] == pytest.approx(sum(_plain(backend, "The cat sat on the ", "mat")), abs=1e-4)
    assert out["meta_logprob"].iloc[0] == pytest.approx(
        sum(_plain(backend, lam[0].extra["meta_prompt"] + " ", "mat")), abs=1e-4)


@pytest.mark.long  # over 40 s: the long pass (scripts/test.sh)
@pytest.mark.model
@pytest.mark.slow
def test_data_run_end_to_end_on_a_release_in_the_format(tmp_path):
    import json

    rel = write_stimuli(write_release(tmp_path / "rel"))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "experiments.cli", "reproduce", "hu-frank2024", "--data", str(rel), "--items", "1",
           "--out", str(out), "-q", "--n-boot", "200"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = pd.read_csv(out / "tables" / "twinlab_rows.csv")
    assert set(rows["domain"]) == {"digit_mat", "crt", "lambada", "syntax"}
    assert set(rows["method"]) == {"generated", "mc", "direct", "meta"}
    assert (rows["family"] == "twinlab").all() and rows["n_params_b"].iloc[0] == pytest.approx(0.1348, abs=1e-3)
    assert len(rows[rows["domain"] == "crt"]) == 3 * 2  # one item per CRT condition, two methods
    acc = pd.read_csv(out / "tables" / "accuracy.csv")
    assert {"authors", "twinlab"} <= set(acc["source"])
    r2 = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)  # a re-run reuses every domain
    assert r2.returncode == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert len(prov["runs"]) == 2 and all(t["reused"] for t in prov["timings"])
    assert any(k.startswith("stimuli:digit_mat") for k in prov["files"])


@pytest.mark.parametrize("args, message", [
    (["--items", "ten"], "--items is the number of items per domain"),
    (["--items", "5", "--authors-outputs", "x"], "leave out --authors-outputs"),
])
def test_data_mode_refuses_bad_options_before_writing(tmp_path, args, message):
    rel = write_stimuli(write_release(tmp_path / "rel"))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "reproduce", "hu-frank2024", "--data", str(rel),
                        "--out", str(out), *args], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_data_mode_refuses_a_broken_stimulus_file_before_loading_a_model(tmp_path):
    rel = write_stimuli(write_release(tmp_path / "rel"))
    (rel / "external_stimuli" / "crt" / "stimuli.csv").write_text("condition,item_id,question\ncrt1,1,Q?\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "reproduce", "hu-frank2024", "--data", str(rel),
                        "--out", str(out), "--items", "1"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and "crt/stimuli.csv: missing column(s) correct, intuitive" in r.stderr
    assert not out.exists()


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.long
def test_data_with_seq2seq_t5_runs_the_four_domains_and_fits_the_equations(tmp_path):
    """`--data DIR --items 5 --backend seq2seq` with T5 checkpoints built here (a SentencePiece tokenizer
    with T5's sentinels, random weights): the four domains run on those models (not the bundled SmolLM2), the
    models file's families, sizes and steps reach the rows, equations (1)-(2) are fitted on these models alone
    and with the authors', (3)-(4) on the checkpoint series, and a fit on one size is refused, naming it."""
    import json

    from tests.support.hu_frank_t5 import build_t5, item_texts, more_t5

    rel = write_stimuli(write_release(tmp_path / "rel"))
    a = build_t5(tmp_path / "t5-a", item_texts(rel))
    b = more_t5(tmp_path / "t5-b", a, seed=1, d_model=48, d_ff=96)
    c1, c2 = more_t5(tmp_path / "run-1000", a, seed=2), more_t5(tmp_path / "run-2000", a, seed=3)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n"
                      f"  - {{path: {a}, family: t5, size: 60M}}\n"
                      f"  - {{path: {b}, family: t5-wide, size: 250M}}\n"
                      f"  - {{path: {c1}, family: t5-run, size: 120M, step: 1000}}\n"
                      f"  - {{path: {c2}, family: t5-run, size: 120M, step: 2000}}\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "experiments.cli", "reproduce", "hu-frank2024", "--data", str(rel), "--items", "5",
           "--backend", "seq2seq", "--models", str(models), "--out", str(out), "-q", "--n-boot", "200"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["options"]["backend"] == "seq2seq"
    assert [(m["backend"], m["architecture"], m["path_given"]) for m in prov["models"]] == [
        ("seq2seq", "T5ForConditionalGeneration", str(p)) for p in (a, b, c1, c2)]
    rows = pd.read_csv(out / "tables" / "twinlab_rows.csv")
    assert set(rows["domain"]) == {"digit_mat", "crt", "lambada", "syntax"}
    fam = rows.groupby("model")[["family", "n_params_b", "training_step"]].first()
    assert fam.loc["t5-b (twinlab)", "family"] == "t5-wide" and fam.loc["t5-b (twinlab)", "n_params_b"] == 0.25
    assert (fam.loc["run-2000 (twinlab)", "training_step"] == 2000
            and fam.loc["run-2000 (twinlab)", "family"] == "t5-run")
    assert len(rows[(rows["domain"] == "digit_mat") & (rows["model"] == "t5-a (twinlab)")]) == 2 * 5
    fits = pd.read_csv(out / "tables" / "your_fits.csv")
    size = fits[fits["analysis"] == "size"]
    assert len(size) == 8 and set(size["models"]) == {"your 3 models", f"your 3 + the authors' {len(MODELS)}"}
    fitted = size[size["status"] != "refused"]
    assert len(fitted) >= 6 and fitted["value"].notna().all() and fitted["status"].notna().all()
    # a fit that is not interpretable gets no star
    assert (fitted[fitted["status"] != "ok"]["signif"].fillna("") == "").all()
    train = fits[fits["analysis"] == "training"].set_index("domain")
    assert set(train.index) == {"analogical reasoning", "word prediction"}
    assert train.loc["word prediction", "statistic"] == "t" and np.isfinite(train.loc["word prediction", "value"])
    assert (out / "figures" / "fig4A_digit_mat_training_t5-run-0.12.png").exists()
    page = (out / "report.html").read_text()
    assert "Equations (1)-(4) on your models" in page and "seq2seq" in page


def test_an_equation_on_one_size_or_one_family_is_refused_naming_what_is_missing():
    from reproductions.hu_frank import fits as F

    rows = pd.DataFrame({"family": ["a"] * 4, "method": ["generated", "mc"] * 2, "task": "digit_mat",
                         "item": [1, 1, 2, 2], "model": "m", "correct": [0, 1, 1, 0], "n_params_b": 0.1})
    f = F.checked_fit("digit_mat", F.model_frame(rows, "digit_mat"), False, "your 1 model")
    assert f.fit is None and "needs models of at least 2 model sizes" in f.error and "100,000,000 parameters" in f.error
    two = pd.concat([rows, rows.assign(n_params_b=0.2, model="m2")], ignore_index=True)
    f = F.checked_fit("digit_mat", F.model_frame(two, "digit_mat"), False, "your 2 models")
    assert f.fit is None and "at least 2 families (got 1: a)" in f.error
    steps = two.assign(training_step=[1000] * 4 + [1000] * 4)
    f = F.checked_fit("digit_mat", F.model_frame(steps, "digit_mat", training=True), True, "series")
    assert f.fit is None and "at least 2 training steps (got 1: step 1000)" in f.error
