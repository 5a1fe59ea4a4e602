"""`twinlab power` (registered by analysis/cli.py): the API's power() with its options checked first.

Nothing heavy is imported at module level; R starts when the pilot is fitted."""
from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from analysis.api import power as api_power
from analysis.load import LoadError
from analysis.power.layout import run_with_fixed_layout
from analysis.stats.mixed import MixedModelError
from experiments.cli_common import console, fail


def power(
    data: List[Path] = typer.Argument(..., help="the pilot: session folders or CSVs, loaded as `twinlab analyze` loads "
                                                "them"),
    formula: str = typer.Option(..., "--formula", help="the lme4 formula of the planned analysis, e.g. \"correct ~ "
                                                       "cond + (1 | subject) + (1 | item)\" (twinlab's grammar, never "
                                                       "run as R code; glmer for 0/1 outcomes, lmer with log RTs)"),
    term: str = typer.Option(..., "--term", help="the term whose test is powered, as written in the formula (e.g. "
                                                 "attractor_number or a:b) or a coefficient's name (a1)"),
    subjects: str = typer.Option(..., "--subjects", help="study sizes in subjects, e.g. 16,24,32,48 (subjects rotate "
                                                         "through the pilot's lists)"),
    items: str = typer.Option("", "--items", help="item counts, e.g. 24,48 (default: the pilot's; extra items copy the "
                                                  "pilot's with their conditions)"),
    effect: Optional[float] = typer.Option(None, "--effect", help="the term's coefficient on the fitted model's scale "
                                                                  "(log-odds for 0/1, log RT for RTs); 0 simulates the "
                                                                  "null. Default: the pilot's estimate (observed "
                                                                  "power, warned)"),
    sims: int = typer.Option(500, "--sims", help="simulated studies per size (at most 10,000)"),
    alpha: float = typer.Option(0.05, "--alpha", help="significance level of the test"),
    seed: int = typer.Option(0, "--seed", help="seed: each simulation's numbers depend only on the seed, never on "
                                               "--cores, --batch or early stopping; every run of the same command "
                                               "writes the same table (the layout fixed, docs/analysis/power.md)"),
    group: Optional[str] = typer.Option(None, "--group", help="the group whose rows are the pilot (human, or a model "
                                                              "group 'model · context · protocol'); needed when the "
                                                              "data hold several"),
    out: Path = typer.Option(..., "--out", "-o", help="results folder: tables/power.csv, tables/power_sims.csv, "
                                                      "figures/power.png, power.json"),
    test: str = typer.Option("wald", "--test", help="wald (Wald z; a chi-square for several coefficients) or lrt "
                                                    "(likelihood-ratio test against the fit without the term)"),
    target: float = typer.Option(0.8, "--target", help="the power a size is judged against for early stopping (and the "
                                                       "figure's line)"),
    no_early_stop: bool = typer.Option(False, "--no-early-stop", help="run every size's --sims simulations"),
    cores: int = typer.Option(2, "--cores", help="parallel R workers (parallel::mclapply)"),
    batch: int = typer.Option(50, "--batch", help="simulations per R call (progress and the early-stopping check after "
                                                  "each)"),
    sd: List[str] = typer.Option([], "--sd", help="GROUP=SD: state the SD of a grouping's random intercept (e.g. "
                                                  "subject=0.8) instead of the pilot's; repeatable"),
    family: str = typer.Option("auto", "--family", help="auto (binomial for 0/1, else gaussian) | binomial | gaussian"),
    interval: str = typer.Option("wilson", "--interval", help="Monte Carlo interval of power: wilson or "
                                                              "clopper-pearson"),
    force: bool = typer.Option(False, "--force", help="replace an earlier power run in --out"),
) -> None:
    """Estimate power by simulation from a pilot of people or of model subjects taken as a hypothesis.

    Power curves with Monte Carlo CIs over subjects and items, failed and boundary fits counted apart, in parallel
    with early stopping."""
    from analysis.api import InputError  # late: the CLI starts without the analysis (pandas, R)

    unfixed = run_with_fixed_layout()  # returns only when the layout is fixed, or cannot be (then said)
    if unfixed:
        typer.echo(f"warning: {unfixed}; two runs of this command may differ in the last bits (docs/analysis.md)",
                   err=True)
    t0 = time.time()
    try:
        res = api_power([str(p) for p in data], formula, term, subjects, items=items or None, effect=effect,
                        sims=sims, alpha=alpha, seed=seed, group=group, out=out, force=force,
                        log=lambda m: console.print(m, highlight=False, markup=False, soft_wrap=True),
                        test=test, target=target, early_stop=not no_early_stop, cores=cores, batch=batch,
                        sd=_parse_sd(sd), family=family, interval=interval)
    except (InputError, LoadError) as exc:
        fail(str(exc))
    except MixedModelError as exc:
        fail(str(exc), code=1)
    except OSError as exc:
        fail(f"--out {out}: cannot write {exc.filename or ''} ({exc.strerror or exc})")
    for r in res["rows"]:
        shown = ("no power" if r["power"] != r["power"]
                 else f"power {r['power']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")
        typer.echo(f"{r['subjects']} subjects x {r['items']} items: {shown} ({r['tests']} tests of {r['sims_run']} "
                   "sims; "
                   f"failed {r['failed']}, unconverged {r['unconverged']}, implausible SE {r['implausible_se']}, "
                   f"boundary {r['boundary']}; analytic "
                   f"{r['analytic_power']:.3f}){'' if r['status'] == 'ok' else ' - ' + r['status']}")
    failed = [r for r in res["rows"] if r["power"] is None or r["power"] != r["power"]]
    typer.echo(f"wrote {Path(out) / 'tables' / 'power.csv'} ({len(res['rows'])} sizes, {res['test']}) and "
               f"{Path(out) / 'power.json'} in {time.time() - t0:.1f} s")
    if failed and len(failed) == len(res["rows"]):
        fail("no study size gave a power: the simulated fits mostly failed at every size (see the status column of "
             "tables/power.csv)", code=1)


def _parse_sd(values: list[str]) -> dict[str, float]:
    from analysis.input_errors import InputError  # late: the CLI starts without the analysis (pandas, R)

    out = {}
    for v in values:
        name, eq, num = v.partition("=")
        try:
            out[name.strip()] = float(num)
        except ValueError:
            eq = ""
        if not eq or not name.strip():
            raise InputError(f"--sd {v!r}: write GROUP=SD, e.g. --sd subject=0.8")
    return out
