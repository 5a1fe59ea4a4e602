"""`twinlab reproduce hu-frank2024 --data DIR --model ... --items N`: the four domains with both methods on the
user's models, from the release's stimuli (stimuli.py), scored as the authors score them (run.py), and put
into the paper's figures beside the authors' 13 models when DIR holds their outputs (marked "twinlab")."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from model_subjects import ModelLoadError, load_backend
from reproductions.common import Report, ReproError, slug, write_provenance
from reproductions.hu_frank import fits as F
from reproductions.hu_frank import stimuli as st
from reproductions.hu_frank.authors import PAPER, AuthorsOptions, analyse, require_r, training_section
from reproductions.hu_frank.models_file import ModelEntry
from reproductions.hu_frank.released import LABEL, Released, read_released
from reproductions.hu_frank.run import run_model
from reproductions.hu_frank.stimuli import META_PROMPT_LAMBADA, META_PROMPT_PAIR


@dataclass
class LabOptions:
    data: Path
    out: Path
    models: list[str | None] = field(default_factory=lambda: [None])
    items: int | None = None  # per domain (per condition for the CRT); None = all
    seed: int = 1
    n_boot: int = 1000
    add_bos: bool = False
    dtype: str = "float32"
    device: str = "cpu"
    batch_size: int | str = 32
    threads: int | None = 1
    quiet: bool = False
    backend: str | None = None  # model_subjects registry name (None = transformers)
    backend_options: dict = field(default_factory=dict)  # -B KEY=VALUE
    entries: list | None = None  # models_file.ModelEntry per model (--models FILE); None = opt.models
    fits: bool = True  # equations (1)-(4) on the user's models (R/lme4)


def _say(opt: LabOptions, msg: str) -> None:
    if not opt.quiet:
        print(f"[hu-frank2024] {msg}", file=sys.stderr, flush=True)


def plan_items(opt: LabOptions) -> dict[str, list[st.Item]]:
    all_items = st.load_all(opt.data)
    return {d: st.sample(its, opt.items, opt.seed, by="condition" if d == "crt" else "")
            for d, its in all_items.items()}


def model_entries(opt: LabOptions) -> list:
    if opt.entries:
        return list(opt.entries)
    return [ModelEntry(str(m) if m is not None else "", "twinlab", None) for m in opt.models]


def _run_models(opt: LabOptions, items: dict[str, list[st.Item]]) -> tuple[pd.DataFrame, list[dict], list]:
    """Each model, loaded one at a time, runs every domain; returns the rows, the models and the timings."""

    frames, models, timings = [], [], []
    for e in model_entries(opt):
        try:
            backend = load_backend(e.path or None, backend=opt.backend, dtype=opt.dtype, device=opt.device,
                                   add_bos=opt.add_bos, batch_size=opt.batch_size, threads=opt.threads,
                                   **opt.backend_options)
        except ModelLoadError as exc:
            raise ReproError(str(exc)) from None
        rows, desc, t = run_model(backend, items, opt.out, say=lambda s: _say(opt, s), entry=e if opt.entries else None)
        _say(opt, f"{desc.get('label') or desc.get('name')}: backend {desc.get('backend')}, "
                  f"{desc.get('n_parameters') or 0:,} parameters counted")
        frames.append(rows)
        models.append(desc)
        timings += t
        del backend
    return pd.concat(frames, ignore_index=True), models, timings


def _report_intro(rep: Report, opt: LabOptions, items: dict[str, list[st.Item]], models: list[dict],
                  rel: Released, root: Path) -> None:
    """What ran (models, items, the authors' outputs beside them) and how each domain is scored."""
    rep.text("Models run by twinlab: "
             f"{', '.join(str(d.get('label') or d.get('name')) + ' (' + str(d.get('backend')) + ')' for d in models)} "
             "(marked 'twinlab' in every "
             f"figure). Items: {', '.join(f'{LABEL[d]} {len(v)}' for d, v in items.items())}"
             + (" (a seeded sample, --items "
                f"{opt.items}" + (" per CRT condition" if opt.items else "") + f", seed {opt.seed})"
                if opt.items else "") + ". The authors' models: "
             + ("their released outputs in " + str(root / 'output') if rel.size else "none (DIR has no output/)") + ".")
    rep.text("Scoring as the authors': digit matrices, production = the generated digits up to ']' (10 new tokens, "
             "greedy), forced choice = argmax of the 8 choices' summed log-probabilities; CRT, production = the first "
             "line, coded correct / intuitive / other by the authors' pattern match (strict; the lenient code, "
             "correct answer anywhere in the first line, is in the item table), forced choice = mean per-token "
             "log-probability of correct > intuitive; LAMBADA, final-word log-probability after the prefix (direct) "
             "or prompt (1); grammaticality, log P(good) > log P(bad) (direct) or P('1') vs P('2') after prompt (2) "
             "in both orders. The authors' production codes of the CRT were checked by hand; twinlab's are the "
             "automatic pattern match.")


def _fits_section(rep: Report, size_rows: pd.DataFrame, series: dict, rel: Released, opt: LabOptions) -> list:
    """Equations (1)-(4) on the user's models (with --fits), each with its diagnostics; returns the fits."""
    fits = lab_fits(size_rows, series, rel, opt) if opt.fits else []
    if fits:
        table = F.lab_fits_table(fits)
        rep.heading("Equations (1)-(4) on your models", anchor="your-fits")
        rep.text("The paper's equations fitted on your models alone and together with the authors' 13 (size: "
                 "equation (1) for the binary domains, (2) for word prediction; your checkpoint series: (3) and (4)). "
                 "Every fit carries its diagnostics and the boundary rule (docs/analysis/analyses.md); a fit that is "
                 "not "
                 "interpretable gets no star; a fit that cannot mean anything on the models given is refused, "
                 "naming what is missing.")
        shown = table[[c for c in ("domain", "analysis", "models", "statistic", "value", "p", "signif",
                                   "z_hessian_free", "status", "messages") if c in table.columns]]
        rep.table("your_fits", table, "The interaction of size (or step) and method per fit", shown=shown)
        for r in table.itertuples():
            if r.status == "refused":
                rep.note(f"{r.domain}, {r.models}: {r.messages}.")
    return fits


def _lab_provenance(opt: LabOptions, root: Path, rel: Released, models: list[dict], timings: list, fits: list,
                    started: float) -> None:
    """provenance.json: the stimulus and release files read, the options, prompts, timings and each fit's status."""
    ext = root / "external_stimuli" if (root / "external_stimuli").is_dir() else root
    files = {f"stimuli:{p.relative_to(ext)}": p
             for p in (ext / "digit_mat" / "all_problems.npz", ext / "crt" / "stimuli.csv",
                       ext / "dgl" / "stimuli.csv", ext / "blimp" / "stimuli.csv")}
    lam = sorted((root / "output" / "lambada").glob("*.csv*"))
    if lam:
        files["lambada items"] = lam[0]
    files |= {f"release:{f.relative_to(root)}": f for f in rel.files}

    opts = {"data": str(opt.data), "out": str(opt.out), "models": [e.path for e in model_entries(opt)],
            "models_file": [e.__dict__ for e in opt.entries] if opt.entries else None, "items_per_domain": opt.items,
            "seed": opt.seed, "n_boot": opt.n_boot, "add_bos": opt.add_bos, "dtype": opt.dtype, "device": opt.device,
            "batch_size": opt.batch_size, "threads": opt.threads, "backend": opt.backend or "transformers",
            "backend_options": opt.backend_options, "fits": opt.fits}
    write_provenance(opt.out, PAPER, opts, models, {}, {"prompt (1) word prediction": META_PROMPT_LAMBADA,
                                                        "prompt (2) grammaticality": META_PROMPT_PAIR,
                                                        "CRT": "Question: {question}\nAnswer:"},
                     files, [], started, extra={"timings": timings, "fits": [
                         {"domain": f.domain, "analysis": f.analysis, "models": f.label, "formula": f.formula,
                          "status": f.fit.status if f.fit else f.error} for f in fits]})


def reproduce_lab(opt: LabOptions) -> Path:
    """Read every stimulus file and check R first, run the models, then the authors' analysis with them added."""
    started = time.time()
    items = plan_items(opt)  # every stimulus file is read and checked before the first model loads
    root = Path(opt.data).expanduser()
    rel = read_released(root) if (root / "output").is_dir() else Released({}, {})
    require_r(opt.fits)
    opt.out.mkdir(parents=True, exist_ok=True)
    ours, models, timings = _run_models(opt, items)
    rep = Report(opt.out, "Hu & Frank (2024): the four domains on your models, beside the authors' 13")
    _report_intro(rep, opt, items, models, rel, root)
    size_rows, series = split_series(ours)
    res = analyse(rel, AuthorsOptions(root, opt.out, fits=False, sensitivity=False, n_boot=opt.n_boot,
                                      seed=opt.seed, quiet=opt.quiet, extra_rows=size_rows), rep)
    for key, rows in series.items():
        for domain in ("digit_mat", "lambada"):
            training_section(domain, rows[rows["domain"] == domain], f"{key[0]} ({key[1]:.3g}B parameters)",
                             AuthorsOptions(root, opt.out, fits=False, n_boot=opt.n_boot, seed=opt.seed,
                                            quiet=opt.quiet), rep,
                             slug(f"{key[0]}-{key[1]:.3g}"))
    fits = _fits_section(rep, size_rows, series, rel, opt)
    for name, t in res["tables"].items():
        rep.table(name, t, name.replace("_", " "), show=False)
    rep.table("twinlab_rows", ours, "twinlab's per-item rows in the authors' coding (the analysis's input)", show=False)
    rep.table("timings", pd.DataFrame(timings), "Time per model and domain")
    _lab_provenance(opt, root, rel, models, timings, fits, started)
    return rep.write()


def split_series(ours: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[str, float], pd.DataFrame]]:
    """The rows of the size analysis and the checkpoint series. A series is the models of one family and size
    given with a training step; in the size analysis it is represented by its last checkpoint (as the
    paper's OLMo-7B is its final model); a model without a step is in the size analysis only."""
    series = {}
    keep = ours["training_step"].isna()
    stepped = ours[~keep]
    for (fam, size), g in stepped.groupby(["family", "n_params_b"], sort=True):
        series[(str(fam), float(size))] = g
        last = g["training_step"].max()
        keep |= ours.index.isin(g.index[g["training_step"] == last])
    return ours[keep].reset_index(drop=True), series


def lab_fits(size_rows: pd.DataFrame, series: dict, rel: Released, opt: LabOptions) -> list:
    """Equations (1)-(2) on the user's models alone and with the authors' 13; (3)-(4) on each checkpoint series."""
    out = []
    for domain in ("digit_mat", "crt", "lambada", "syntax"):
        ours = size_rows[size_rows["domain"] == domain]
        if ours.empty:
            continue
        n = ours["model"].nunique()
        _say(opt, f"{domain}: equation {'(1)' if F.BINARY[domain] else '(2)'} on your models")
        out.append(F.checked_fit(domain, F.model_frame(ours, domain), False, f"your {n} model{'s' * (n != 1)}"))
        theirs = rel.size.get(domain)
        if theirs is not None and not theirs.empty:
            both = pd.concat([theirs[theirs["source"] == "authors"], ours], ignore_index=True)
            _say(opt, f"{domain}: equation {'(1)' if F.BINARY[domain] else '(2)'} on yours and the authors' 13")
            out.append(F.checked_fit(domain, F.model_frame(both, domain), False,
                                     f"your {n} + the authors' "
                                     f"{theirs[theirs['source'] == 'authors']['model'].nunique()}"))
    for (fam, size), rows in series.items():
        for domain in ("digit_mat", "lambada"):
            r = rows[rows["domain"] == domain]
            if r.empty:
                continue
            label = f"checkpoints of {fam} {size:.3g}B ({r['training_step'].nunique()} steps)"
            out.append(F.checked_fit(domain, F.model_frame(r, domain, training=True), True, label))
    return out
