"""A plain logistic regression of an error on one predictor (the curves of Figures C1-C3 and of any design's
learning grids): one place for the fit and for the note that replaces it when it cannot mean anything."""
from __future__ import annotations

import warnings

import numpy as np


def logistic_fit(x: np.ndarray, y: np.ndarray) -> dict:
    """error ~ x by maximum likelihood (statsmodels GLM, binomial); a note instead of a fit when impossible."""
    import statsmodels.api as sm  # statsmodels (~0.6 s) loads only for this fit

    x = np.asarray(x, float)
    y = np.asarray(y, float)
    res = {"n": int(len(y)), "intercept": np.nan, "slope": np.nan, "slope_se": np.nan, "slope_p": np.nan,
           "status": "not fitted", "note": ""}
    if len(y) < 5:
        res["note"] = "fewer than 5 trials"
    elif y.min() == y.max():
        res["note"] = "no errors" if y.max() == 0 else "all errors"
    elif np.ptp(x) == 0:
        res["note"] = "a single trial position"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                fit = sm.GLM(y, sm.add_constant(x), family=sm.families.Binomial()).fit()
                res.update(intercept=float(fit.params[0]), slope=float(fit.params[1]),
                           slope_se=float(fit.bse[1]), slope_p=float(fit.pvalues[1]),
                           status="ok" if fit.converged else "not converged, do not interpret")
            except Exception as exc:  # perfect separation, no convergence (warnings are errors here)
                res["note"] = f"no fit ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
                res["status"] = "not converged, do not interpret"
    return res
