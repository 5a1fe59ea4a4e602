"""Model subjects at lab scale, without downloading anything: a random-weight model of a named shape.

Builds `AutoModelForCausalLM.from_config` from a named config (random weights: speed does not
depend on the weights) with the bundled SmolLM2 tokenizer, and runs the three rows of the GPU speed
table in one process:

  1. forced choice, long-nested items (inner dependency), eight-shot prompt `eightshot_a`;
  2. forced choice, the same items, no prompt;
  3. running context: S subjects x T trials of the bundled spec (violation judgment, feedback),
     all subjects advancing together, and one subject after another.

Rows 1-2: twinlab with default settings (`batch_size="auto"`), twinlab at batch 512, and minicons
(`IncrementalLMScorer.conditional_score`, batches of 32 sequences) on the same model object.

    python -m benchmarks.bench_scale --config tiny                        # CPU, seconds
    python -m benchmarks.bench_scale --config llama8b --device cuda --dtype bfloat16 --items 4096 \
        --subjects 55 --trials 540                                        # GPU (the issue's targets)
"""
from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from typing import Any

from benchmarks.bench_model_forced_choice import items_and_requests
from benchmarks.bench_model_running import long_spec

CONFIGS: dict[str, dict[str, Any]] = {
    # a few million parameters: runs anywhere in seconds
    "tiny": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2),
    # the bundled model's shape (SmolLM2-135M)
    "smollm2-135m": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                         num_key_value_heads=3),
    # Llama-3-8B shape with the SmolLM2 vocabulary (7.4B parameters)
    "llama8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                    num_key_value_heads=8, rope_theta=500000.0),
}


def build_backend(config: str, device: str, dtype: str, threads: int, seed: int = 0):
    """A TransformersBackend around a random-weight Llama of the named shape and the bundled tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

    from model_subjects.backends.hf import DTYPES, TransformersBackend
    from model_subjects.loading import ResolvedModel, resolve_model

    if config not in CONFIGS:
        raise SystemExit(f"unknown --config {config!r}; one of {', '.join(CONFIGS)}")
    if threads and device == "cpu":
        torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(resolve_model(None).path, local_files_only=True)
    cfg = LlamaConfig(vocab_size=len(tok), max_position_embeddings=32768, tie_word_embeddings=True,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, **CONFIGS[config])
    torch.manual_seed(seed)
    dname = DTYPES[dtype]
    kwargs: dict[str, Any] = {"dtype": getattr(torch, dname)}
    if device == "auto":
        kwargs["device_map"] = "auto"
    with torch.device("cpu" if device == "auto" else device):
        model = AutoModelForCausalLM.from_config(cfg, **{k: v for k, v in kwargs.items() if k != "device_map"})
    if device == "auto":
        from accelerate import dispatch_model, infer_auto_device_map

        model = dispatch_model(model, device_map=infer_auto_device_map(model))
    model.eval()
    resolved = ResolvedModel(name=f"random-{config}", path="(from_config)", kind="random",
                             info={"config": config, "seed": seed})
    return TransformersBackend(model, tok, resolved, device=device, dtype=dname, threads=threads)


def forced_choice_row(backend, n: int, prompt: str | None, minicons_batch: int, skip_minicons: bool) -> dict:
    from model_subjects.requests import LoglikelihoodRequest

    _, rows = items_and_requests(n, prompt)
    n = len(rows)
    reqs = [LoglikelihoodRequest(ctx, " " + w) for ctx, c, f in rows for w in (c, f)]
    backend.loglikelihood(reqs[:16])  # warm-up (same for every scorer below)
    out: dict[str, Any] = {"items": n}
    results = {}
    for label, bs in (("default", "auto"), ("batch512", 512)):
        backend.batch_size = bs
        _sync(backend)
        t = time.perf_counter()
        results[label] = backend.loglikelihood(reqs)
        _sync(backend)
        out[label] = n / (time.perf_counter() - t)
    backend.batch_size = "auto"
    a, b = results["default"], results["batch512"]
    out["choices_same_default_vs_512"] = sum((a[2 * i].logprob > a[2 * i + 1].logprob)
                                             == (b[2 * i].logprob > b[2 * i + 1].logprob) for i in range(n))
    if not skip_minicons:
        from minicons import scorer

        dev = str(backend.input_device)
        mc = scorer.IncrementalLMScorer(backend.model, device=dev, tokenizer=backend.tokenizer)
        pre = [ctx for ctx, c, f in rows for _ in (0, 1)]
        stim = [w for ctx, c, f in rows for w in (c, f)]
        mc.conditional_score(pre[:16], stim[:16], reduction=lambda x: x.sum(0).item())
        _sync(backend)
        t = time.perf_counter()
        scores: list[float] = []
        for s in range(0, len(pre), minicons_batch):
            scores += mc.conditional_score(pre[s:s + minicons_batch], stim[s:s + minicons_batch],
                                           reduction=lambda x: x.sum(0).item())
        _sync(backend)
        out["minicons"] = n / (time.perf_counter() - t)
        out["choices_same_vs_minicons"] = sum(
            (a[2 * i].logprob > a[2 * i + 1].logprob) == (scores[2 * i] > scores[2 * i + 1]) for i in range(n))
        out["max_abs_dlogp_vs_minicons"] = max(abs(r.logprob - s) for r, s in zip(a, scores, strict=False))
    return out


def running_row(backend, subjects: int, trials: int) -> dict:
    from model_subjects.runner import RunConfig, Runner

    exp = long_spec(trials)
    out: dict[str, Any] = {"subjects": subjects, "trials": trials}
    for label, together in (("together", True), ("one_after_another", False)):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = RunConfig(spec="lakretz2021_nested", out=tmp, subjects=subjects, context="running",
                            trials=trials, parallel_running=together)
            _sync(backend)
            t = time.perf_counter()
            Runner(cfg, backend, exp=exp).run()
            _sync(backend)
            out[label] = time.perf_counter() - t
    return out


def _sync(backend) -> None:
    torch = backend.torch
    if torch.cuda.is_available() and backend.input_device.type == "cuda":
        torch.cuda.synchronize()


def table(res: dict) -> str:
    fc8, fc0, run = res["eightshot"], res["noprompt"], res["running"]

    def cells(r: dict) -> str:
        mc = f"{r['minicons']:,.1f} items/s" if "minicons" in r else "-"
        ratio = f" ({r['default'] / r['minicons']:.1f}x)" if "minicons" in r else ""
        return f"{r['default']:,.1f} items/s{ratio} | {r['batch512']:,.1f} items/s | {mc}"

    lines = [
        "| work | twinlab, default settings | twinlab, batch 512 | minicons |",
        "|---|---|---|---|",
        f"| forced choice, {fc8['items']} long-nested items, eight-shot prompt | {cells(fc8)} |",
        f"| forced choice, {fc0['items']} items, no prompt | {cells(fc0)} |",
        f"| running context, {run['subjects']} subjects x {run['trials']} trials | {run['together']:.1f} s together "
        f"({run['one_after_another']:.1f} s one after another) | - | - |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="tiny", choices=sorted(CONFIGS))
    ap.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N | auto (accelerate device map)")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--items", type=int, default=256)
    ap.add_argument("--subjects", type=int, default=4)
    ap.add_argument("--trials", type=int, default=184)
    ap.add_argument("--minicons-batch", type=int, default=32)
    ap.add_argument("--skip-minicons", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    import torch

    t = time.perf_counter()
    backend = build_backend(args.config, args.device, args.dtype, args.threads)
    n_params = sum(p.numel() for p in backend.model.parameters())
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() and args.device != "cpu" else None
    print(f"config {args.config} ({n_params / 1e6:,.1f}M parameters, random weights)  device {args.device}"
          f"{' ' + gpu if gpu else ''}  dtype {args.dtype}  threads {torch.get_num_threads()}  "
          f"cpu {platform.processor() or platform.machine()}  build {time.perf_counter() - t:.1f}s", flush=True)
    res: dict[str, Any] = {"config": args.config, "n_parameters": n_params, "device": args.device, "gpu": gpu,
                           "dtype": args.dtype, "threads": torch.get_num_threads()}
    res["eightshot"] = forced_choice_row(backend, args.items, "eightshot_a", args.minicons_batch, args.skip_minicons)
    print("eight-shot:", json.dumps(res["eightshot"]), flush=True)
    res["noprompt"] = forced_choice_row(backend, args.items, None, args.minicons_batch, args.skip_minicons)
    print("no prompt:", json.dumps(res["noprompt"]), flush=True)
    res["running"] = running_row(backend, args.subjects, args.trials)
    print("running:", json.dumps(res["running"]), flush=True)
    res["batching"] = backend.sizer.describe()
    print()
    print(table(res))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=2)
    return res


if __name__ == "__main__":
    main()
