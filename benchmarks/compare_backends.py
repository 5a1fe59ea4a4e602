"""Do the llama.cpp and transformers backends agree on the bundled model?

Both backends run the same model: the SmolLM2-135M-Instruct Q4_1 GGUF, run quantised by llama.cpp
(activations are quantised to 8 bits for its Q4_1 dot products) and de-quantised to float32 by
transformers. The same subject runs through the same spec in each backend with `twinlab`'s runner;
the rows are compared trial by trial:

  * choices: the same response;
  * log-probabilities: the largest |difference| of any option's log-probability, over the trials
    whose full context is the same text in both runs (`extra.context_sha256`). In a running session
    with feedback, one different answer changes every later context (the answer and its feedback
    are in the history), so trials after the first divergence are compared only where their
    contexts still agree (they do not); the table says how many were compared.

    python -m benchmarks.compare_backends                     # the docs table (held-in items + running)
    python -m benchmarks.compare_backends --running-trials 40 --subject-count 1
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from experiments.session import read_rows

SPEC = "lakretz2021_nested"
CASES = (  # (label, protocol, context)
    ("forced choice, no context", "forced_choice", "none"),
    ("violation judgment, no context", "violation_judgment", "none"),
)


def run_rows(backend: Any, protocol: str, context: str, out: Path, trials: int | None, subjects: int = 1) -> list[dict]:
    """Run `subjects` model subjects of the bundled spec and return their rows (subject, trial order)."""
    from model_subjects.runner import RunConfig, Runner

    cfg = RunConfig(spec=SPEC, subjects=subjects, protocol=protocol, context=context, out=out, trials=trials,
                    tie_margin=0.0)  # raw scores of both backends: no near-tie re-scoring in a comparison
    Runner(cfg, backend).run()
    rows = []
    for csv in sorted((out / "data").glob("*_data.csv")):
        rows += read_rows(csv)
    return rows


def compare_rows(a: list[dict], b: list[dict]) -> dict[str, Any]:
    """Choice agreement and the largest log-probability difference between two runs of the same trials."""
    assert [(r["subject_id"], r["trial_index"]) for r in a] == [(r["subject_id"], r["trial_index"]) for r in b]
    same_choice = 0
    compared = 0
    max_d = 0.0
    max_margin_d = 0.0
    flips: list[dict[str, Any]] = []
    first_divergence = None
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        ex, ey = json.loads(x["extra"]), json.loads(y["extra"])
        same = x["response"] == y["response"]
        same_choice += same
        if not same:
            flips.append({"trial_index": int(x["trial_index"]), "margin_a": float(x["margin"]),
                          "margin_b": float(y["margin"])})
            if first_divergence is None:
                first_divergence = k
        if ex["context_sha256"] != ey["context_sha256"]:
            continue
        compared += 1
        la, lb = json.loads(x["option_logprobs"]), json.loads(y["option_logprobs"])
        max_d = max(max_d, max(abs(p - q) for p, q in zip(la, lb, strict=False)))
        max_margin_d = max(max_margin_d, abs(float(x["margin"]) - float(y["margin"])))
    return {"trials": len(a), "same_choice": same_choice, "agreement": same_choice / len(a) if a else 1.0,
            "compared_logprobs": compared, "max_abs_dlogp": max_d, "max_abs_dmargin": max_margin_d,
            "flips": flips, "first_divergence": first_divergence,
            "max_flip_margin": max((max(abs(f["margin_a"]), abs(f["margin_b"])) for f in flips), default=0.0)}


def compare(hf: Any, llama: Any, trials: int | None = None, running_trials: int = 40, subjects: int = 1,
            cases: tuple = CASES) -> list[dict[str, Any]]:
    """Every case of `cases` plus a running session with feedback; one result dict per case."""
    results = []
    todo = list(cases) + [(f"violation judgment, running context with feedback ({running_trials} trials)",
                           "violation_judgment", "running")]
    with tempfile.TemporaryDirectory(prefix="twinlab-compare-") as tmp:
        for k, (label, protocol, context) in enumerate(todo):
            n = running_trials if context == "running" else trials
            ra = run_rows(hf, protocol, context, Path(tmp) / f"{k}-hf", n, subjects)
            rb = run_rows(llama, protocol, context, Path(tmp) / f"{k}-llama", n, subjects)
            res = compare_rows(ra, rb)
            res.update({"case": label, "protocol": protocol, "context": context})
            results.append(res)
    return results


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| items | trials | same choice | largest \\|dlogP\\| (trials compared) | largest \\|d margin\\| | "
             "flipped choices: largest \\|margin\\| |",
             "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['case']} | {r['trials']} | {r['same_choice']}/{r['trials']} ({100 * r['agreement']:.1f}%) "
                     "| "
                     f"{r['max_abs_dlogp']:.3f} ({r['compared_logprobs']}) | {r['max_abs_dmargin']:.3f} | "
                     f"{r['max_flip_margin']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=None, help="held-in trials per subject (default: all)")
    ap.add_argument("--running-trials", type=int, default=40)
    ap.add_argument("--subject-count", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from model_subjects.backends.registry import load_backend

    hf = load_backend(None, threads=args.threads)
    llama = load_backend(None, backend="llamacpp", threads=args.threads)
    results = compare(hf, llama, args.trials, args.running_trials, args.subject_count)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
