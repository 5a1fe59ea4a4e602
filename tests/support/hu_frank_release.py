"""Writes a small synthetic release in the exact format of jennhu/lm-task-demands `output/` (the columns of
the released files, their True/False spellings, .csv and .csv.gz, the OLMo-7B checkpoint names, the one
CRT file without `generated_response_label`), for tests of the reader. Values are synthetic (the release
has no licence); every count a test checks is fixed by the seed and recomputed by hand in the test."""
from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np

HEAD = {
    "digit_mat": (
        "problem_type,problem_ind,problem_id,perm_invariant,correct_answer,generated_response,"
        "generated_response_sum_logprob,generated_response_pred_set,generated_response_correct,mc_answer_logprobs,"
        "mc_response_index,mc_response,mc_response_sum_logprob,mc_response_correct,model,revision"
    ),
    "crt": (
        "condition,item_id,question,correct,intuitive,total_cost,more,correct_alt,intuitive_alt,total_cost_alt,"
        "more_alt,generated_response_raw,generated_response,generated_response_naive_label,generated_response_label,"
        "mc_answer_logprobs,mc_answer_labels,mc_correct_logprob,mc_intuitive_logprob,mc_response_index,"
        "mc_response_label,mc_response,mc_response_mean_logprob,mc_response_correct,mc_correct_alt_logprob,"
        "mc_intuitive_alt_logprob,mc_response_correct_alt,model,revision"
    ),
    "crt_quirk": (
        "condition,item_id,question,correct,intuitive,t,generated_response_raw,generated_response,"
        "generated_response_naive_label,generated_response_naive_label,mc_answer_logprobs,mc_answer_labels,"
        "mc_correct_logprob,mc_intuitive_logprob,mc_response_index,mc_response_label,mc_response,"
        "mc_response_mean_logprob,mc_response_correct,model,revision"
    ),
    "lambada": (
        "item_id,prefix,final_word,direct_logprob,meta_logprob,kl_divergence,spearman_r_all,spearman_p_all,"
        "spearman_r_top100,spearman_p_top100,model,revision"
    ),
    "blimp": (
        "good_sentence,bad_sentence,category,category_fine,blimp_UID,blimp_pairID,item_id,condition,"
        "direct_sum_logprob_good_sentence,direct_sum_logprob_bad_sentence,direct_correct,"
        "meta_sum_logprob_good_first_1,meta_sum_logprob_good_first_2,meta_sum_logprob_bad_first_1,"
        "meta_sum_logprob_bad_first_2,meta_1_correct,meta_2_correct,meta_good_correct,meta_bad_correct,meta_correct,"
        "meta_correct_lenient,model,revision"
    ),
    "dgl": (
        "item_id,phenomenon,test_item,original_condition,sentence_grammatical,sentence_ungrammatical,condition,"
        "direct_sum_logprob_good_sentence,direct_sum_logprob_bad_sentence,direct_correct,"
        "meta_sum_logprob_good_first_1,meta_sum_logprob_good_first_2,meta_sum_logprob_bad_first_1,"
        "meta_sum_logprob_bad_first_2,meta_1_correct,meta_2_correct,meta_good_correct,meta_bad_correct,meta_correct,"
        "meta_correct_lenient,model,revision"
    ),
}
MODELS = {  # file stem -> (model id, probability of a correct answer, low / high demand)
    "pythia-1b-deduped": ("EleutherAI/pythia-1b-deduped", 0.6, 0.3),
    "pythia-2.8b-deduped": ("EleutherAI/pythia-2.8b-deduped", 0.7, 0.5),
    "gemma-2b": ("google/gemma-2b", 0.65, 0.4),
    "gemma-7b": ("google/gemma-7b", 0.8, 0.7),
    "OLMo-1B": ("allenai/OLMo-1B", 0.6, 0.35),
    "OLMo-7B": ("allenai/OLMo-7B", 0.75, 0.6),
}
CHECKPOINTS = {"OLMo-7B_step10000-tokens44B": ("step10000-tokens44B", 0.5, 0.2),
               "OLMo-7B_step91000-tokens403B": ("step91000-tokens403B", 0.6, 0.4)}
N = {"digit_mat": 12, "crt": 6, "lambada": 10, "blimp": 8, "dgl": 6}
DGL = [("Anaphora", "TS 1"), ("Anaphora", "TS 2"), ("Order of Adjectives", "TS 1"), ("Order of Adjectives", "TS 6"),
       ("Order of Adjectives", "TS 10"), ("Negation", "TS 7")]  # TS 6 and TS 10 of Order of Adjectives are dropped


def _write(path: Path, header: str, rows: list[list], gz: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    buf.write(header + "\n")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    if gz:
        Path(str(path) + ".gz").write_bytes(gzip.compress(buf.getvalue().encode("utf-8"), mtime=0))
    else:
        path.write_text(buf.getvalue(), encoding="utf-8")


def write_release(root: Path, seed: int = 7) -> Path:
    """The synthetic release under root/output; returns root."""
    rng = np.random.default_rng(seed)
    out = root / "output"
    tf = lambda b: "True" if b else "False"  # noqa: E731 (the release's spelling)
    for k, (stem, (mid, lo, hi)) in enumerate(list(MODELS.items()) + [(s, ("allenai/OLMo-7B", a, b))
                                                                     for s, (_, a, b) in CHECKPOINTS.items()]):
        rev = CHECKPOINTS[stem][0] if stem in CHECKPOINTS else ""
        gz = k % 2 == 0  # both .csv and .csv.gz, as a user's clone may hold either
        rows = []
        for i in range(N["digit_mat"]):
            g, m = rng.random() < hi, rng.random() < lo
            rows.append(["row_constant", i, f"row_constant_{i}", "False", "[3]", "3]\n[4]", -1.5, "[3]" if g else "[4]",
                         tf(g), "[-1.0, -2.0]", 0, "3]", -1.0, tf(m), mid, rev])
        _write(out / "digit_mat" / f"{stem}.csv", HEAD["digit_mat"], rows, gz)
        rows = []
        for i in range(N["lambada"]):
            d = -2.0 - rng.random() * 3
            rows.append([i, f"Some text number {i} ending in", "word", d, d - 1.0 - (1 - hi) * 4 * rng.random(),
                         0.1, 0.8, 0.0, 0.4, 0.01, mid, rev])
        _write(out / "lambada" / f"{stem}.csv", HEAD["lambada"], rows, gz)
        if stem in CHECKPOINTS:
            continue
        rows = []
        for i in range(N["crt"]):
            label = ["correct", "intuitive", "", "more"][int(rng.integers(0, 4))]
            c, it = -1.0 - rng.random(), -1.0 - rng.random()
            rows.append(["crt1", i + 1, f"Question {i}?", "$5", "$10", "$15", "$1", "$5", "$10", "$15", "$1", "raw",
                         "resp", label, label, "[-1]", "['correct']", c, it, 0, "correct", "$5", -1.0, "FALSE",
                         -1.0, -1.0, "FALSE", mid, rev])
        _write(out / "crt" / "crt1" / f"{stem}.csv", HEAD["crt"], rows, gz)
        if stem == "gemma-2b":  # the released crt3/Llama-2-7b-hf quirk: the label column is missing
            q = [["crt2", i + 1, f"Q{i}", "$5", "$10", "t", "raw", "resp", "correct", "correct", "[-1]", "[]",
                  -1.0, -2.0, 0, "correct", "$5", -1.0, "TRUE", mid, ""] for i in range(N["crt"])]
            _write(out / "crt" / "crt2" / f"{stem}.csv", HEAD["crt_quirk"], q, gz)
        rows = []
        for i in range(N["blimp"]):
            d, mg, mb = rng.random() < lo, rng.random() < hi, rng.random() < hi
            rows.append([f"Good {i}.", f"Bad {i}.", "syntax", "argument_structure", "transitive", i, i + 1, "paired",
                         -20.0, -22.0, tf(d), -2.0, -3.0, -2.1, -3.1, tf(mg), tf(mb), tf(mg), tf(mb), "False", "True",
                         mid, rev])
        _write(out / "blimp" / f"{stem}.csv", HEAD["blimp"], rows, gz)
        rows = []
        for i, (ph, ts) in enumerate(DGL):
            d, mg, mb = rng.random() < lo, rng.random() < hi, rng.random() < hi
            rows.append([i, ph, ts, "grammatical", f"Grammatical {i}", f"Ungrammatical {i}", "paired", -50.0, -51.0,
                         tf(d), -2.0, -3.0, -2.0, -3.0, tf(mg), tf(mb), tf(mg), tf(mb), "False", "True", mid, rev])
        _write(out / "dgl" / f"{stem}.csv", HEAD["dgl"], rows, gz)
    return root


if __name__ == "__main__":
    import sys

    write_release(Path(sys.argv[1]))


def write_stimuli(root: Path) -> Path:
    """The release's external_stimuli/ in its formats (a 2-type digit-matrix archive, CRT, BLiMP, DGL CSVs,
    one BLiMP JSONL.gz) with a few synthetic items; LAMBADA items come from output/lambada (write_release)."""
    ext = root / "external_stimuli"
    (ext / "digit_mat").mkdir(parents=True, exist_ok=True)
    probs = {
        "row_constant": {"prob": np.array([[[[6], [6], [6]], [[1], [1], [1]], [[3], [3], [3]]]] * 3),
                         "answer_choices": np.array([[[9], [7], [0], [3], [2], [6], [1], [5]]] * 3),
                         "correct_ind": np.array([3, 3, 3]), "perm_invariant": False},
        "c2_set_union": {"prob": np.array([[[[1, 2], [3, -1], [1, 3]], [[4, 5], [6, -1], [4, 6]],
                                             [[7, 8], [9, -1], [7, 9]]]] * 2),
                         "answer_choices": np.array([[[9, 7], [7, 8], [8, 9], [1, 2], [3, 4], [5, 6], [7, 9],
                                                      [0, 1]]] * 2),
                         "correct_ind": np.array([0, 6]), "perm_invariant": True},
    }
    np.savez(ext / "digit_mat" / "all_problems.npz", all_problems=np.array(probs, dtype=object))
    (ext / "crt").mkdir(exist_ok=True)
    (ext / "crt" / "stimuli.csv").write_text(
        "condition,item_id,question,total_cost,more,correct,intuitive,t\n"
        "crt1,1,A pear and a fridge together cost $140. The pear costs $100 more than the fridge. How much does the "
        "fridge cost?,140,100,$20.0,$40.0,\n"
        "crt2,1,How long does it take 5 machines to make 5 widgets if 1 machine takes 5 minutes for 1 widget?,,,5 "
        "minutes,1 minute,\n"
        "crt3,1,A lily patch doubles every day and covers the lake in 48 days. When does it cover half?,,,47 days,24 "
        "days,12 days\n",
        encoding="utf-8")
    (ext / "blimp").mkdir(exist_ok=True)
    (ext / "blimp" / "stimuli.csv").write_text(
        "good_sentence,bad_sentence,category,category_fine,blimp_UID,blimp_pairID,item_id\n"
        "Mary had left.,Mary had referenced.,syntax,argument_structure,drop_argument,608,1\n"
        "The dogs eat meat.,The dogs eats meat.,syntax,agreement,regular_plural_subject_verb_agreement_1,3,2\n",
        encoding="utf-8")
    (ext / "blimp" / "raw").mkdir(exist_ok=True)
    (ext / "blimp" / "raw" / "causative.jsonl.gz").write_bytes(gzip.compress(
        b'{"sentence_good": "Aaron breaks the glass.", "sentence_bad": "Aaron appeared the glass.", '
        b'"UID": "causative", "pairID": "0"}\n',
        mtime=0))
    (ext / "dgl").mkdir(exist_ok=True)
    (ext / "dgl" / "stimuli.csv").write_text(
        "item_id,phenomenon,test_item,original_condition,sentence_grammatical,sentence_ungrammatical\n"
        "0,Anaphora,TS 1,grammatical,The executive doubted himself,The executive doubted themselves\n"
        "1,Order of Adjectives,TS 6,grammatical,A big red ball,A red big ball\n",
        encoding="utf-8")
    return root
