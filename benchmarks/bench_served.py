"""The served backend against a real server on this machine: 1, 4 and 16 in flight.

`--server llamacpp` (default) starts llama-cpp-python's server on 127.0.0.1 with the bundled GGUF
(`python -m model_subjects.served.llama_server`, one thread, as the other CPU benchmarks);
`--server vllm` starts vLLM's (CPU build, `.venv-vllm`) with twinlab's converted SmolLM2, fp32,
as the README does (prompt log-probabilities: its echo passes the probe). Then it times, with a fresh
response cache each time (so every request reaches the server):

  * items/s: violation judgment for `--items` trials of a `none`-context subject (one next-token
    request per item: ' Yes' and ' No' are read from its top log-probabilities);
  * running-subject trials/s: `--subjects` subjects in `running` context (instructions, own
    answers, feedback), `--trials` trials each, the whole history sent with every request.

For each, `max_in_flight` 1, 4 and 16 (running: 1, 4 and 16 subjects, each step's requests of all
subjects in flight at once). Prints one table and writes `--json` if asked.

    python -m benchmarks.bench_served --items 184 --trials 10
    python -m benchmarks.bench_served --server vllm --items 184 --trials 10
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from served_support import LlamaServer, VllmServer, vllm_python


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=184, help="forced-choice trials (subjects of 184 trials)")
    ap.add_argument("--trials", type=int, default=10, help="running trials per subject")
    ap.add_argument("--levels", default="1,4,16", help="requests (subjects) in flight")
    ap.add_argument("--server", choices=("llamacpp", "vllm"), default="llamacpp")
    ap.add_argument("--server-args", default="", help="extra llama_cpp.server arguments, e.g. '--cache true'")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--skip-running", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

    from model_subjects.loading import bundled_gguf, resolve_model
    from model_subjects.runner import RunConfig, Runner
    from model_subjects.served import ServedBackend

    levels = [int(x) for x in args.levels.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="twinlab-bench-served-"))
    t0 = time.perf_counter()
    if args.server == "vllm":
        python = vllm_python()
        if python is None:
            raise SystemExit("no vLLM environment (.venv-vllm, made by scripts/setup.sh; or TWINLAB_VLLM_PYTHON)")
        srv = VllmServer(Path(resolve_model(None).path), python, log=tmp / "server.log").start()
    else:
        srv = LlamaServer(bundled_gguf(), n_ctx=args.n_ctx, log=tmp / "server.log",
                          extra=args.server_args.split() if args.server_args else None).start()
    ready = time.perf_counter() - t0
    print(f"{args.server} server ready in {ready:.0f} s ({srv.url}; log {tmp / 'server.log'})", flush=True)
    results: dict = {"server": args.server, "server_args": args.server_args, "n_ctx": args.n_ctx,
                     "ready_seconds": ready, "items": {}, "running": {}}
    try:
        for n in levels:
            b = ServedBackend(srv.url, cache_dir=None, max_in_flight=n)
            subjects = max(1, -(-args.items // 184))
            cfg = RunConfig(spec="lakretz2021_nested", out=tmp / f"fc{n}", subjects=subjects,
                            protocol="violation_judgment", trials=min(args.items, 184))
            t0 = time.perf_counter()
            s = Runner(cfg, b).run()
            dt = time.perf_counter() - t0
            results["items"][n] = {"items": s.trials_run, "seconds": dt, "items_per_s": s.trials_run / dt}
            print(f"violation judgment, {s.trials_run} items, {n} in flight: {dt:.1f} s, {s.trials_run / dt:.2f} "
                  "items/s",
                  flush=True)
            b.close()
        if not args.skip_running:
            for n in levels:
                b = ServedBackend(srv.url, cache_dir=None, max_in_flight=n)
                cfg = RunConfig(spec="lakretz2021_nested", out=tmp / f"run{n}", subjects=n, context="running",
                                trials=args.trials)
                t0 = time.perf_counter()
                s = Runner(cfg, b).run()
                dt = time.perf_counter() - t0
                results["running"][n] = {"subjects": n, "trials": s.trials_run, "seconds": dt,
                                         "trials_per_s": s.trials_run / dt}
                print(f"running context, {n} subject(s) x {args.trials} trials, {n} in flight: {dt:.1f} s, "
                      f"{s.trials_run / dt:.2f} trials/s", flush=True)
                b.close()
    finally:
        srv.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
