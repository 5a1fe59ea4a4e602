"""seeds/002 (Hu & Frank 2024) whole: the released outputs' reader, the demand gap, the paper's lme4 models,
the figures, and the four domains run on a user's models. One job per module:

    models.py     the paper's Table 2 (family, parameters, training tokens) and checkpoint names
    released.py   the authors' per-item outputs (output/<task>[/<condition>]/<model>.csv[.gz]) as long tables
    gap.py        accuracy by method and model, the demand gap, the bootstrapped regression bands
    fits.py       equations (1)-(4) by lme4/R exactly as the authors fitted them, and the sensitivity fits
    plots.py      Figures 2-4
    authors.py    `reproduce hu-frank2024 --authors-outputs`: all of the above into one report
"""
