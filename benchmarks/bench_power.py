"""How long does `twinlab power` take for one study size, against simr's way (a plain loop)?

The issue's budget: 500 simulations of a binomial GLMM with crossed random intercepts over 24 items in a
Latin square in under 5 minutes per size on the 2-core machine. The pilot is synthetic (tests/support/
power_synthetic.py: one two-level factor, 2 lists, 24 items); the size timed is 24 subjects x 24 items
(576 trials) with the effect and both SDs stated (--effect 0.3, --sd subject=0.6, --sd item=0.4).

In the same run, the plain loop on the same design and parameters: lme4's simulate() then glmer from scratch
with its defaults, one simulation after another on one core (what simr's powerSim does per simulation). It
runs `--plain-sims` simulations (default 100) and its time per simulation is scaled to 500; the ratio is of
time per simulation. The load average is printed before and after: the machine is shared.

    python -m benchmarks.bench_power                 # 500 sims, plain loop 100 sims
    python -m benchmarks.bench_power --sims 100 --plain-sims 50 --cores 1
    python -m benchmarks.bench_power --one-core-sims 100    # also twinlab on one core: the parallel gain apart
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tests.support.power_synthetic import pilot

PLAIN = r"""
function(d, beta, theta, n, seed) {
  set.seed(seed)
  f <- y ~ cond + (1 | subject_id) + (1 | item)
  hits <- 0; ok <- 0
  t0 <- proc.time()[[3]]
  for (k in seq_len(n)) {
    d$y <- suppressMessages(stats::simulate(~ cond + (1 | subject_id) + (1 | item), newdata = d,
             family = stats::binomial, newparams = list(beta = beta, theta = theta))[[1]])
    m <- tryCatch(suppressMessages(suppressWarnings(lme4::glmer(f, d, family = stats::binomial))),
                  error = function(e) NULL)
    if (is.null(m)) next
    ok <- ok + 1
    hits <- hits + (stats::coef(summary(m))["cond", 4] < 0.05)
  }
  c(hits, ok, proc.time()[[3]] - t0)
}
"""


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=int, default=500)
    ap.add_argument("--plain-sims", type=int, default=100)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--subjects", type=int, default=24)
    ap.add_argument("--one-core-sims", type=int, default=0,
                    help="also time twinlab with one core on this many sims (separates the parallel gain from the "
                         "rest)")
    args = ap.parse_args(argv)

    from analysis import api
    from analysis.power.pilot import build_pilot
    from analysis.power.run import coded_design
    from analysis.power.settings import PowerSettings, check_settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pilot"
        pilot(root, n_subjects=12, n_items=24, seed=4, intercept=0.5, effect=0.3)
        df = api.load_sessions([root])
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        res = api.power(df, "correct ~ cond + (1 | subject) + (1 | item)", "cond", subjects=[args.subjects],
                        effect=0.3, sims=args.sims, seed=1, early_stop=False, cores=args.cores,
                        sd={"subject": 0.6, "item": 0.4}, log=lambda m: print(m, flush=True))
        fast = time.perf_counter() - t0
        load1 = os.getloadavg()
        one = None
        if args.one_core_sims:
            t1 = time.perf_counter()
            api.power(df, "correct ~ cond + (1 | subject) + (1 | item)", "cond", subjects=[args.subjects], effect=0.3,
                      sims=args.one_core_sims, seed=1, early_stop=False, cores=1, sd={"subject": 0.6, "item": 0.4})
            one = (time.perf_counter() - t1) / args.one_core_sims
        s = PowerSettings(data=[], formula="correct ~ cond + (1 | subject) + (1 | item)", term="cond",
                          subjects=[args.subjects], effect=0.3, sd={"subject": 0.6, "item": 0.4})
        p = build_pilot(s, check_settings(s), df, api.factors(df), lambda m: None)
        design, _ = coded_design(p, args.subjects, None)
        import rpy2.robjects as ro

        from analysis.stats.mixed import r_frame

        beta = ro.FloatVector([p.truth.beta["(Intercept)"], 0.3])
        hits, ok, secs = ro.r(PLAIN)(r_frame(design), beta, ro.FloatVector([0.6, 0.4]), args.plain_sims, 5)
        load2 = os.getloadavg()
    row = res["rows"][0]
    per_fast, per_plain = fast / row["sims_run"], secs / args.plain_sims
    out = {"sims": row["sims_run"], "fast_s": round(fast, 1), "fast_per_sim_s": round(per_fast, 3),
           "plain_sims": args.plain_sims, "plain_s": round(secs, 1), "plain_per_sim_s": round(per_plain, 3),
           "plain_500_s_scaled": round(per_plain * 500, 1), "ratio": round(per_plain / per_fast, 2),
           "one_core_per_sim_s": None if one is None else round(one, 3),
           "power_fast": round(row["power"], 3), "power_plain": round(hits / ok, 3),
           "analytic": round(row["analytic_power"], 3), "failed": row["failed"], "unconverged": row["unconverged"],
           "boundary": row["boundary"], "cores": args.cores, "load_before": [round(x, 2) for x in load0],
           "load_mid": [round(x, 2) for x in load1], "load_after": [round(x, 2) for x in load2]}
    for k, v in out.items():
        print(f"{k}: {v}")
    return out


if __name__ == "__main__":
    main()
