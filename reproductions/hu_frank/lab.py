"""`twinlab reproduce hu-frank2024 --data DIR --model ... --items N`: the four domains with both methods on the
user's models, from the release's stimuli (stimuli.py), scored as the authors score them (run.py), and put
into the paper's figures beside the authors' 13 models when DIR holds their outputs (marked "twinlab")."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reproductions.common import ReproError, Report, write_provenance
from reproductions.hu_frank import stimuli as st
from reproductions.hu_frank.authors import PAPER, AuthorsOptions, analyse
from reproductions.hu_frank.released import LABEL, Released, read_released


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


def _say(opt: LabOptions, msg: str) -> None:
    if not opt.quiet:
        import sys

        print(f"[hu-frank2024] {msg}", file=sys.stderr, flush=True)


def plan_items(opt: LabOptions) -> dict[str, list[st.Item]]:
    all_items = st.load_all(opt.data)
    return {d: st.sample(its, opt.items, opt.seed, by="condition" if d == "crt" else "") for d, its in all_items.items()}


def reproduce_lab(opt: LabOptions) -> Path:
    from model_subjects import ModelLoadError, load_backend
    from reproductions.hu_frank.run import run_model

    started = time.time()
    items = plan_items(opt)  # every stimulus file is read and checked before the first model loads
    root = Path(opt.data).expanduser()
    rel = read_released(root) if (root / "output").is_dir() else Released({}, {})
    opt.out.mkdir(parents=True, exist_ok=True)
    frames, models, timings = [], [], []
    for m in opt.models:
        try:
            backend = load_backend(m, dtype=opt.dtype, device=opt.device, add_bos=opt.add_bos,
                                   batch_size=opt.batch_size, threads=opt.threads)
        except ModelLoadError as exc:
            raise ReproError(str(exc)) from None
        rows, desc, t = run_model(backend, items, opt.out, say=lambda s: _say(opt, s))
        frames.append(rows)
        models.append(desc)
        timings += t
        del backend
    ours = pd.concat(frames, ignore_index=True)
    rep = Report(opt.out, "Hu & Frank (2024): the four domains on your models, beside the authors' 13")
    rep.text(f"Models run by twinlab: {', '.join(str(d.get('name')) for d in models)} (marked 'twinlab' in every "
             f"figure). Items: {', '.join(f'{LABEL[d]} {len(v)}' for d, v in items.items())}"
             + (f" (a seeded sample, --items {opt.items}" + (" per CRT condition" if opt.items else "") + f", seed {opt.seed})"
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
    res = analyse(rel, AuthorsOptions(root, opt.out, fits=False, sensitivity=False, n_boot=opt.n_boot,
                                      seed=opt.seed, quiet=opt.quiet, extra_rows=ours), rep)
    for name, t in res["tables"].items():
        rep.table(name, t, name.replace("_", " "), show=False)
    rep.table("twinlab_rows", ours, "twinlab's per-item rows in the authors' coding (the analysis's input)", show=False)
    rep.table("timings", pd.DataFrame(timings), "Time per model and domain")
    ext = root / "external_stimuli" if (root / "external_stimuli").is_dir() else root
    files = {f"stimuli:{p.relative_to(ext)}": p for p in (ext / "digit_mat" / "all_problems.npz", ext / "crt" / "stimuli.csv",
                                                           ext / "dgl" / "stimuli.csv", ext / "blimp" / "stimuli.csv")}
    lam = sorted((root / "output" / "lambada").glob("*.csv*"))
    if lam:
        files["lambada items"] = lam[0]
    files |= {f"release:{f.relative_to(root)}": f for f in rel.files}
    from reproductions.hu_frank.stimuli import META_PROMPT_LAMBADA, META_PROMPT_PAIR

    opts = {"data": str(opt.data), "out": str(opt.out), "models": [str(m) for m in opt.models], "items_per_domain": opt.items,
            "seed": opt.seed, "n_boot": opt.n_boot, "add_bos": opt.add_bos, "dtype": opt.dtype, "device": opt.device,
            "batch_size": opt.batch_size, "threads": opt.threads}
    write_provenance(opt.out, PAPER, opts, models, {}, {"prompt (1) word prediction": META_PROMPT_LAMBADA,
                                                        "prompt (2) grammaticality": META_PROMPT_PAIR,
                                                        "CRT": "Question: {question}\nAnswer:"},
                     files, [], started, extra={"timings": timings})
    return rep.write()
