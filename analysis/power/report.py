"""What a power run writes: tables/power.csv (one row per size), tables/power_sims.csv (one row per simulated
study), power.json (the seed and every setting, the pilot's parameters, the rows, the warnings) and
figures/power.png (power against subjects, one line per item count, the 95% Monte Carlo intervals as bands,
the analytic pass dashed, the target's line, 80% by default). Every file is written to a temporary name and renamed."""
from __future__ import annotations

import io
import json
import platform
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from analysis.power.layout import layout_fixed
from analysis.power.pilot import ROUNDING
from analysis.power.settings import MODEL_LABEL, Pilot, PowerSettings
from analysis.power.stats import IMPLAUSIBLE_SE
from analysis.report.figures import PALETTE, pyplot
from analysis.report.results_folder import clean_json, json_default
from experiments.atomic import atomic_write_bytes, atomic_write_text

TABLE_COLUMNS = ["pilot", "subjects", "items", "lists", "trials_per_subject", "sims_asked", "sims_run", "tests",
                 "rejected", "power", "ci_low", "ci_high", "failed", "unconverged", "implausible_se",
                 "power_incl_implausible", "boundary", "degenerate", "power_no_boundary",
                 "analytic_power", "status", "stopped_early", "notes", "analytic_note", "seed", "seconds"]
SIM_COLUMNS = ["subjects", "items", "sim", "estimate", "se", "statistic", "p", "failed", "converged", "singular",
               "boundary", "degenerate", "se_ratio", "implausible_se", "message"]


def test_name(s: PowerSettings, pilot: Pilot) -> str:
    k = len(pilot.coefficients)
    if s.test == "lrt":
        return f"likelihood-ratio test (chi-square, {k} df; both fits by ML)"
    if k > 1:
        return f"Wald chi-square ({k} df)"
    return "Wald z" + (" (lmer's t read as z)" if pilot.truth.family == "gaussian" and pilot.coded.random else "")


def results_dict(s: PowerSettings, pilot: Pilot, rows: list[dict], analytic: dict, seconds: float) -> dict:
    """Everything power.json holds (the module docstring)."""
    fit = pilot.fit
    return {
        "title": "twinlab power",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(seconds, 1),
        "settings": asdict(s),
        "seed": s.seed,
        "test": test_name(s, pilot),
        "alpha": s.alpha,
        "interval": f"95% {s.interval} interval of power over the simulations that gave a test",
        "pilot": {"group": pilot.group, "subject_kind": pilot.kind,
                  "label": MODEL_LABEL if pilot.kind == "model" else "effect sizes estimated from people",
                  "formula": fit.formula, "fitted": fit.fitted, "family": fit.family, "method": fit.method,
                  "status": fit.status, "messages": fit.messages, "random_structure": fit.random_structure,
                  "contrasts": fit.contrasts, "n_obs": fit.n_obs, "n_groups": fit.n_groups,
                  "coefficients": fit.coefficients, "random_effects": fit.random_effects,
                  "boundary_cause": pilot.zero_sds, "optimizer_check": getattr(fit, "optimizer_check", {}) or {}},
        "design": {"lists": pilot.template.list_names, "list_source": pilot.template.list_source,
                   "trials_per_list": pilot.template.trials_per_list, "pilot_items": len(pilot.template.items),
                   "pilot_subjects": pilot.template.n_pilot_subjects,
                   "rule": "subjects rotate through the pilot's lists; extra items copy the pilot's items with their "
                           "condition in each list (analysis/power/design.py)"},
        "simulated": {"term": s.term, "coefficients": pilot.coefficients, "beta": pilot.truth.beta,
                      "random_effects": pilot.truth.random_effects, "sigma": pilot.truth.sigma, "rounding": ROUNDING,
                      "effect": "stated (--effect)" if s.effect is not None else "the pilot's estimate (observed "
                                                                                 "power)"},
        "rules": {"power": "rejections / tests; a test is a converged fit with a plausible SE (boundary fits included "
                           "and counted); failed, unconverged and implausible-SE fits are counted apart, never as "
                           "'not significant' or as rejections",
                  "implausible_se": f"a converged fit whose tested SE is below {IMPLAUSIBLE_SE:g} x the pilot's SE x "
                                    "sqrt(pilot trials / simulated trials) is a broken fit, not a test "
                                    "(power_incl_implausible: the share had they been counted)",
                  "mostly_failed": "a size where fewer than half of the simulations gave a test has no power",
                  "early_stop": f"after each batch of {s.batch}, from {s.min_sims} sims on, a size stops once the 99% "
                                "Wilson interval of its power lies above or below "
                                f"{s.target:g}" if s.early_stop else "off",
                  "seeds": "simulation i of a size uses the i-th L'Ecuyer-CMRG stream of that size's seed (column "
                           "seed); "
                           "within a run its numbers do not depend on --cores, --batch or early stopping",
                  "layout": ("fixed (ADDR_NO_RANDOMIZE): every run of this command gives the same bits"
                             if layout_fixed() else "not fixed: lme4's last bits can differ between runs "
                                                    "(docs/analysis.md)"),
                  "refit": "lme4 with the fixed effects started at the true ones and the random-effect parameters at "
                           "lme4's default start (1 on the diagonal, 0 off it), optimizer bobyqa; boundary counts are "
                           "those of that start"},
        "warnings": pilot.warnings,
        "rows": [{k: r.get(k) for k in TABLE_COLUMNS} | {"pilot": _pilot_label(pilot, s)} for r in rows],
        "software": _software(),
    }


def _pilot_label(pilot: Pilot, s: PowerSettings) -> str:
    """The pilot column of every row: whose effect sizes these are."""
    source = MODEL_LABEL if pilot.kind == "model" else "effect sizes estimated from people"
    stated = f"; {s.term} stated (--effect {s.effect:g})" if s.effect is not None else "; observed power (no --effect)"
    return f"{pilot.group or 'pilot'}: {source}{stated}"


def _software() -> dict:
    out = {"python": platform.python_version()}
    try:
        import rpy2.robjects as ro  # late: R starts only when a model is fitted

        out["R"] = str(ro.r("R.version.string")[0])
        out["lme4"] = str(ro.r('as.character(packageVersion("lme4"))')[0])
    except Exception:  # R was never started (nothing was simulated)
        pass
    return out


def write_outputs(out: Path, res: dict, sims: pd.DataFrame) -> None:
    """tables/power.csv, tables/power_sims.csv, figures/power.png, then power.json (last: its presence means
    the run is whole)."""
    table = pd.DataFrame(res["rows"], columns=TABLE_COLUMNS)
    atomic_write_text(out / "tables" / "power.csv", table.to_csv(index=False))
    atomic_write_text(out / "tables" / "power_sims.csv", sims[SIM_COLUMNS].to_csv(index=False))
    png = figure(table, res)
    if png is not None:
        atomic_write_bytes(out / "figures" / "power.png", png)
        res["figures"] = ["figures/power.png"]
    res["tables"] = ["tables/power.csv", "tables/power_sims.csv"]
    atomic_write_text(out / "power.json", json.dumps(clean_json(res), indent=1, default=json_default))


def figure(table: pd.DataFrame, res: dict) -> bytes | None:
    """Power against subjects, a line per item count, CI bands, the analytic pass dashed, the 80% line."""
    fig = draw_figure(table, res)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    pyplot().close(fig)
    return buf.getvalue()


def figure_title(res: dict) -> str:
    """The term, the effect simulated and whose pilot it is (and the model label for a model pilot)."""
    st, pilot = res["settings"], res["pilot"]
    coefs = res["simulated"]["coefficients"]
    if st.get("effect") is not None:
        effect = f"effect {st['effect']:g} (stated)"
    elif len(coefs) == 1:
        effect = f"effect {res['simulated']['beta'][coefs[0]]:.3g} (the pilot's: observed power)"
    else:
        effect = f"{len(coefs)} coefficients at the pilot's estimates (observed power)"
    title = f"power of {st['term']}, {effect}\npilot: {pilot['group'] or 'one group'}"
    if pilot["subject_kind"] == "model":
        title += f" ({MODEL_LABEL})"
    causes = pilot.get("boundary_cause") or []
    if causes:
        title += f"\n{boundary_caption(causes)}"
    return title


def boundary_caption(causes: list[str]) -> str:
    """The figure's line for the pilot's SDs at the boundary: the pilot, not the size, and --sd."""
    names = [c.split("'s ", 1)[1].split(" is ", 1)[0] for c in causes if "'s " in c and " is " in c]
    return (f"the pilot's {', '.join(names) or 'random-effect SD'} at the boundary, simulated as 0: boundary fits "
            "come from the pilot, not the size (--sd GROUP=SD states one)")


def draw_figure(table: pd.DataFrame, res: dict):
    """The figure itself (a matplotlib Figure): the target's label sits outside the axes, right of the line,
    where no point or band can be under it."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for k, (items, t) in enumerate(table.groupby("items", sort=True)):
        t = t.sort_values("subjects")
        col = PALETTE[k % len(PALETTE)]
        ax.plot(t["subjects"], t["power"], "o-", color=col, label=f"{items} items (simulation)")
        ax.fill_between(t["subjects"], t["ci_low"], t["ci_high"], color=col, alpha=0.2, linewidth=0)
        if t["analytic_power"].notna().any():
            ax.plot(t["subjects"], t["analytic_power"], "--", color=col, alpha=0.8, label=f"{items} items (analytic)")
        for _, r in t[t["power"].isna()].iterrows():
            ax.annotate("fits failed", (r["subjects"], 0.02), color=col, ha="center", fontsize=8)
    target = res["settings"]["target"]
    ax.axhline(target, color="#555555", linestyle=":", linewidth=1)
    ax.annotate(f"{target:.0%}", (1.0, target), xycoords=("axes fraction", "data"), xytext=(3, 0),
                textcoords="offset points", ha="left", va="center", fontsize=8, color="#555555",
                annotation_clip=False, gid="target_label")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("subjects")
    ax.set_ylabel(f"power ({res['test'].split(' (')[0]}, alpha {res['alpha']:g})")
    ax.set_title(figure_title(res), fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
