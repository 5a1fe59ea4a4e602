"""Render `report.html` from a results folder (results.json + tables/*.csv + figures/*.png).

The report depends only on what is in the folder, so `twinlab report OUT` can re-render it
without the data or R.
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

import pandas as pd

from analysis.report.results_folder import FolderPathError, href, inside
from analysis.stats.mixed import significance_mark, status_of
from experiments.atomic import atomic_write_text
from experiments.outputs import unsafe_target
from stimuli.textfile import read_text_file, regular_file_problem

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;\
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}\
h3{font-size:1.05em;margin-top:1.4em}
table{border-collapse:collapse;font-size:.82em;margin:.5em 0 1em}\
th,td{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
code{background:#f4f4f4;padding:1px 4px;border-radius:3px}.note{color:#7a4b00}.small{font-size:.85em;color:#555}
details{margin:.3em 0 1em}summary{cursor:pointer;color:#345}
.callout{background:#fff7e0;border-left:4px solid #e0a800;padding:.6em .9em}\
.paper{background:#eef4fb;border-left:4px solid #4C72B0;padding:.4em .8em}
table{display:block;overflow-x:auto;max-width:100%}td .ci{display:block;font-size:.85em;color:#666;white-space:nowrap}
td.num{white-space:nowrap}td.txt{text-align:left}.bad{color:#b00020;font-weight:bold}
"""
MAX_ROWS = 60


class ReportError(RuntimeError):
    pass


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and abs(v) < 0.001:
            return f"{v:.2e}"
        return f"{v:.3f}"
    return html.escape(str(v))


def _fmt_na(v) -> str:
    """A diagnostic's value, or "not available" (never a blank)."""
    return _fmt(v) or "not available"


def _cell(v) -> str:
    """A table cell; 'rate [lo, hi]' strings put the interval on a second, smaller line."""
    if isinstance(v, str) and " [" in v and v.endswith("]"):
        main, ci = v.split(" [", 1)
        return f"<td class=num>{html.escape(main)}<span class=ci>[{html.escape(ci)}</span></td>"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"<td class=num>{_fmt(v)}</td>"
    return f"<td class=txt>{_fmt(v)}</td>"


def table_html(df: pd.DataFrame, index: bool = False, transpose: bool = False) -> str:
    if index:
        df = df.reset_index()
    if transpose:  # few rows, many columns (sample sizes): one column per row of the CSV
        first = df.columns[0]
        df = df.set_index(first).T.reset_index().rename(columns={"index": first})
    # break long snake_case headers after their underscores so wide tables fit the page
    head = "".join(f"<th>{html.escape(str(c)).replace('_', '_<wbr>')}</th>" for c in df.columns)
    body = []
    for row in df.head(MAX_ROWS).itertuples(index=False):
        body.append("<tr>" + "".join(_cell(v) for v in row) + "</tr>")
    more = f"<p class=small>{len(df) - MAX_ROWS} more row(s) in the CSV.</p>" if len(df) > MAX_ROWS else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def _read_table(out: Path, meta: dict) -> pd.DataFrame:
    """A shown table's CSV: inside the results folder (never a path results.json makes up), bounded."""
    path = _file(out, meta["file"], f"table {meta.get('title', '')!r}")
    if path.stat().st_size > 200_000_000:
        raise ReportError(f"{path}: too large for a results table (more than 200,000,000 bytes)")
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:  # a table with no rows and no columns (nothing to show): shown empty
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: not a table twinlab wrote ({exc}); re-run `twinlab analyze`") from None
    if meta.get("index"):
        df = df.set_index(df.columns[0])
    return df


def fit_status_html(fit: dict) -> str:
    """The fit's diagnostics in one line: converged, singular, optimiser, fallback; a fit that is not
    interpretable says so in bold before anything else."""
    status = status_of(fit)
    conv = fit.get("converged")
    diag = (f"converged: {'yes' if conv else 'no' if conv is not None else '?'}; singular: "
            f"{'yes' if fit.get('singular') else 'no'}; optimiser: "
            f"{html.escape(fit.get('optimizer') or 'lme4 default')}"
            + (f"; fallback: {html.escape(fit['fallback'])}" if fit.get("fallback") else "")
            + (f"; optimiser warnings: {html.escape('; '.join(fit['optimizer_warnings']))}"
               if fit.get("optimizer_warnings") else "")
            + ("; boundary (docs/analysis/analyses.md, Boundary fits): "
               + html.escape("; ".join(fit["boundary_reasons"])) if fit.get("boundary_reasons") else ""))
    head = "" if status == "ok" else f"<b class=bad>{html.escape(status)}</b> &mdash; "
    return f"<p class=small>{head}fit diagnostics: {diag}</p>"


def fit_html(title: str, fit: dict) -> str:
    status = status_of(fit)
    coef = pd.DataFrame(fit["coefficients"])
    coef = coef[[c for c in ("term", "estimate", "se", "z", "p", "ci_low", "ci_high", "se_hessian_free",
                             "z_hessian_free")
                 if c in coef.columns]]
    if "p" in coef.columns:  # a fit without fixed effects has an empty table, never a crash of the page
        coef["signif"] = [significance_mark(p, status) for p in coef["p"]]
    rfx = ", ".join(f"{r['term'].replace('sd__', 'SD ').replace('cor__', 'cor ')} = {_fmt(r['estimate'])}"
                    for r in fit["random_effects"])
    msgs = "".join(f"<li class=note>{html.escape(m)}</li>" for m in fit.get("messages", []))
    mark = "" if status == "ok" else f" <span class=bad>({html.escape(status)})</span>"
    return (f"<h3>{html.escape(title)}{mark}</h3><p><code>{html.escape(fit['formula'])}</code><br>"
            f"n = {_esc(fit['n_obs'])} trials, {_esc(fit['n_groups'])} subjects; AIC = {_fmt(fit['aic'])}, "
            f"BIC = {_fmt(fit['bic'])}, logLik = {_fmt(fit['loglik'])}, parameters = {_esc(fit['n_params'])}<br>"
            f"random effects (subject): {html.escape(rfx)}</p>{fit_status_html(fit)}{table_html(coef)}"
            + (f"<ul>{msgs}</ul>" if msgs else ""))


def design_fit_html(title: str, fit: dict, ordinal: bool = False) -> str:
    """A user's formula (or a task's model): what was fitted, its diagnostics, contrasts, the fallback
    attempts and the coefficients (stars only for an interpretable fit)."""
    status = fit.get("status", "")
    coef = pd.DataFrame(fit["coefficients"])
    keep = [c for c in ("term", "estimate", "se", "df", "z", "p", "ci_low", "ci_high", "se_hessian_free",
                        "z_hessian_free") if c in coef.columns]
    coef = coef[keep].rename(columns={"z": fit.get("statistic", "z")})
    if "df" in coef.columns and coef["df"].isna().all():
        coef = coef.drop(columns="df")
    if "p" in coef.columns:  # a fit without fixed effects has an empty table, never a crash of the page
        coef["signif"] = [significance_mark(p, status) for p in coef["p"]]
    rfx = ", ".join(f"{r['group']}: {r['term'].replace('sd__', 'SD ').replace('cor__', 'cor ')} = {_fmt(r['estimate'])}"
                    for r in fit.get("random_effects", []))
    mark = "" if status == "ok" else f" <span class=bad>({html.escape(status)})</span>"
    if ordinal:
        diag = (f"<p class=small>{'' if status == 'ok' else f'<b class=bad>{html.escape(status)}</b> &mdash; '}"
                f"fit diagnostics: converged: {'yes' if fit.get('converged') else 'no'} "
                f"({html.escape(str(fit.get('optimizer_message', '')))}); scaled gradient = "
                f"{_fmt_na(fit.get('scaled_grad'))} "
                f"(lme4's check: &lt; 0.002); max.grad = {_fmt_na(fit.get('max_grad'))}; "
                f"cond.H = {_fmt_na(fit.get('cond_h'))}; singular: {'yes' if fit.get('singular') else 'no'}"
                + (f"; {html.escape(fit['fallback'])}" if fit.get("fallback") else "") + "</p>")
        unused = fit.get("unused_points") or []
        head = (f"ordinal::clmm (logit link, flexible thresholds: {_esc(fit.get('n_thresholds'))}"
                + (f"; scale point(s) never used: {_esc(', '.join(map(str, unused)))}" if unused else "")
                + f"); n = {_esc(fit['n_obs'])}; "
                f"AIC = {_fmt(fit.get('aic'))}, logLik = {_fmt(fit.get('loglik'))}")
    else:
        diag = fit_status_html(fit)
        groups = ", ".join(f"{k}: {v}" for k, v in (fit.get("n_groups") or {}).items())
        head = (f"{html.escape(fit.get('method', ''))} ({html.escape(fit.get('family', ''))}"
                + (", response on a log scale" if fit.get("response_transform") == "log" else "")
                + f"); n = {_esc(fit['n_obs'])}" + (f"; groups: {html.escape(groups)}" if groups else "")
                + f"; AIC = {_fmt(fit.get('aic'))}, BIC = {_fmt(fit.get('bic'))}, logLik = {_fmt(fit.get('loglik'))}")
    contr = "".join(f"<li><code>{html.escape(c['factor'])}</code> ({html.escape(', '.join(c['levels']))}): "
                    f"{html.escape(c['coding'])}</li>" for c in fit.get("contrasts", []))
    contr_html = (f"<p class=small>Contrasts: {html.escape(fit.get('contrasts_note', ''))}</p><ul "
                  f"class=small>{contr}</ul>"
                  if contr else "")
    attempts = fit.get("attempts") or []
    att_html = ""
    if len(attempts) > 1 or (attempts and fit.get("random_structure", "").startswith("as given (maximal)")):
        att_html = ("<p class=small>Random-effects structures tried: " + "; ".join(
            f"{html.escape(a['structure'])} <code>{html.escape(a['fitted'])}</code>: {html.escape(a['status'])}"
            for a in attempts) + f". Reported: <b>{html.escape(fit.get('random_structure', ''))}</b>.</p>")
    dropped = "; ".join(f"{k}: {v}" for k, v in (fit.get("rows_dropped") or {}).items())
    msgs = "".join(f"<li class=note>{html.escape(m)}</li>" for m in fit.get("messages", []))
    return (f"<h3>{html.escape(title)}{mark}</h3><p><code>{html.escape(fit['formula'])}</code><br>fitted: "
            f"<code>{html.escape(fit.get('fitted', ''))}</code><br>{head}<br>random effects: "
            f"{html.escape(rfx) or 'none'}"
            + (f"<br>rows left out: {html.escape(dropped)}" if dropped else "") + f"</p>{diag}{att_html}{contr_html}"
            + table_html(coef) + (f"<ul>{msgs}</ul>" if msgs else ""))


def _items_html(items: list[dict]) -> str:
    parts = []
    for it in items:
        if it.get("kind") == "mixed":
            g = it["group"]
            paper = it.get("paper_tables", True)  # the Lakretz sections' models are seeds/000's Tables C2/C3
            if it.get("base"):
                parts.append(fit_html(f"{g}: base model" + (" (Table C2)" if paper else ""), it["base"]))
            if it.get("extended"):
                parts.append(fit_html(f"{g}: extended model" + (" (Table C3)" if paper else ""), it["extended"]))
            c = it.get("comparison")
            if c:
                parts.append(
                    f"<p><b>{html.escape(g)}: model comparison.</b> AIC {_fmt(c['aic_small'])} (base) vs "
                    f"{_fmt(c['aic_big'])} (extended), BIC {_fmt(c['bic_small'])} vs {_fmt(c['bic_big'])}; "
                    f"likelihood ratio &chi;&sup2;({_esc(c['df'])}) = {_fmt(c['chi2'])}, p = {_fmt(c['p'])}. "
                    f"Preferred: {_esc(c['preferred_by_aic'])} (AIC), {_esc(c['preferred_by_bic'])} (BIC)."
                    + ("".join(f" <span class=bad>The {k} fit is {html.escape(status_of(it.get(k)))}: do not "
                               "interpret this comparison.</span>"
                               for k in ("base", "extended") if it.get(k) and status_of(it.get(k)) != "ok"))
                    + "</p>")
        elif it.get("kind") == "text":
            parts.append(f"<p class=small>{html.escape(it['text'])}</p>")
        elif it.get("kind") == "paper":
            parts.append(f"<p class=paper><b>Paper:</b> {html.escape(it['text'])}</p>")
        elif it.get("kind") in ("formula_fit", "ordinal_fit") and it.get("fit"):
            parts.append(design_fit_html(it.get("title", "model"), it["fit"], it["kind"] == "ordinal_fit"))
        elif it.get("kind") == "joint" and it.get("fit"):
            parts.append(fit_html(f"human + {it['model_group']}: joint model", it["fit"]))
    return "".join(parts)


def _esc(v) -> str:
    """Any value of results.json as page text (it is input: a string there may hold markup)."""
    return html.escape("" if v is None else str(v))


def _file(out: Path, rel, what: str) -> Path:
    """A file results.json names: inside the results folder (analysis/report/results_folder.py: inside) and a
    regular file, or ReportError naming it."""
    try:
        path = inside(out, rel, what)
    except FolderPathError as exc:
        raise ReportError(f"{out / 'results.json'}: {exc}") from None
    problem = regular_file_problem(path, "results")
    if problem:
        raise ReportError(f"{out / 'results.json'}: {what}: {rel} {problem}; re-run `twinlab analyze` to rewrite "
                          "the results folder")
    return path


def load_results(out: Path) -> dict:
    """results.json as a dict whose layout (sections, tables, figures, notes) is as twinlab writes it,
    or ReportError naming the file and the entry."""
    rpath = out / "results.json"
    if not rpath.exists():
        raise ReportError(f"{out} is not a results folder (no results.json); run `twinlab analyze DATA --out {out}` "
                          "first")
    try:
        res = json.loads(read_text_file(rpath, ReportError, "results.json", 200_000_000))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{rpath}: not valid JSON ({exc})") from None
    if not isinstance(res, dict):
        raise ReportError(f"{rpath}: not a results file (a JSON object is expected)")
    _check_layout(res, rpath)
    return res


def _check_layout(res: dict, rpath: Path) -> None:
    def bad(where: str, want: str):
        raise ReportError(f"{rpath}: {where} is not as twinlab writes it ({want}); re-run `twinlab analyze`")

    for key in ("tables", "figures", "options", "inputs"):
        if not isinstance(res.get(key, {}), dict):
            bad(key, "an object")
    for key in ("notes", "skipped", "failures", "sections"):
        if not isinstance(res.get(key, []), list):
            bad(key, "a list")
    for key in ("notes", "skipped", "failures"):
        if not all(isinstance(n, str) for n in res.get(key, [])):
            bad(key, "a list of texts")
    for kind in ("tables", "figures"):
        for name, meta in res.get(kind, {}).items():
            if not isinstance(meta, dict) or not isinstance(meta.get("file"), str):
                bad(f"{kind}.{name}", "an object with a file")
    for k, s in enumerate(res.get("sections", [])):
        if not isinstance(s, dict) or not isinstance(s.get("id"), str) or not isinstance(s.get("title"), str):
            bad(f"sections[{k}]", "an object with an id and a title")
        for key in ("tables", "figures", "items"):
            if not isinstance(s.get(key, []), list):
                bad(f"sections[{k}].{key}", "a list")


def render_report(out: str | Path) -> Path:
    """Write OUT/report.html from OUT/results.json and the files it names. results.json is input like any
    other (a folder may come from anyone): every string is escaped, every file it names must lie inside
    OUT (tables/ or figures/, no symlink out), and an entry not as twinlab writes it is a ReportError."""
    out = Path(out)
    res = load_results(out)
    problem = unsafe_target(out / "report.html")  # never written through a link or over a device
    if problem:
        raise ReportError(f"{out / 'report.html'} {problem}")
    try:
        page = _page(out, res)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ReportError(f"{out / 'results.json'}: an entry is not as twinlab writes it ({type(exc).__name__}: "
                          f"{exc}); re-run `twinlab analyze` to rewrite the results folder") from None
    return atomic_write_text(out / "report.html", page)


def _head(res: dict) -> list[str]:
    """Title, options, inputs, stated failures and notes: the top of the page."""
    opt = res.get("options", {})
    h = [f"<!doctype html><html><head><meta charset=utf-8><title>{_esc(res.get('title', 'twinlab'))}</title>"
         f"<style>{CSS}</style></head><body><h1>{_esc(res.get('title', 'twinlab analysis'))}</h1>"]
    failures = res.get("failures", [])
    if failures:
        h.append("<div class=callout><p><b class=bad>Failed: a result you asked for could not be computed</b> "
                 "(the command exited with status 1):</p><ul>"
                 + "".join(f"<li class=bad>{_esc(f)}</li>" for f in failures) + "</ul></div>")
    source = f" ({_esc(res['focus_source'])})" if res.get("focus_source") else ""
    focus = ("" if res.get("design") == "general" else f", focus cell <code>{_esc(opt.get('focus'))}</code>{source}")
    factors = res.get("factors")
    h.append(f"<p class=small>Created {_esc(res.get('created', ''))} in {_esc(res.get('runtime_s', '?'))} s. "
             f"Seed {_esc(opt.get('seed'))}, {_esc(opt.get('n_boot'))} bootstrap resamples{focus}, mixed models "
             f"{'on' if opt.get('mixed') else 'off'}."
             + (f" Design factors: {_esc(', '.join(map(str, factors)))}." if factors else "")
             + (f" Formula: <code>{_esc(opt['formula'])}</code>." if opt.get("formula") else "")
             + (f" {_esc(res['spec_versions'])}" if res.get("spec_versions") else "") + "</p>")
    files = res.get("inputs", {}).get("files", [])
    fmts = res.get("inputs", {}).get("formats", {})
    h.append(f"<details><summary>{len(files)} input file(s)</summary><ul>"
             + "".join(f"<li><code>{_esc(f)}</code> ({_esc(fmts.get(f, ''))})</li>" for f in files)
             + "</ul></details>")
    notes = res.get("notes", []) + res.get("skipped", [])
    if notes:
        h.append("<h3>Notes</h3><ul>" + "".join(f"<li class=note>{_esc(n)}</li>" for n in notes) + "</ul>")
    h.append("<p>Contents: " + " · ".join(f"<a href='#{_esc(s['id'])}'>{_esc(s['title'])}</a>"
                                          for s in res.get("sections", [])) + "</p>")
    return h


def _page(out: Path, res: dict) -> str:
    h = _head(res)
    for s in res.get("sections", []):
        h += _section(out, res, s)
    h.append("</body></html>")
    return "\n".join(h)


def _section(out: Path, res: dict, s: dict) -> list[str]:
    cls = " class=callout" if s["id"] == "trial_order" else ""
    h = [f"<h2 id='{_esc(s['id'])}'>{_esc(s['title'])}</h2><p{cls}>{_md(str(s.get('text', '')))}</p>"]
    shown, linked = [], []
    for name in s.get("tables", []):
        meta = res.get("tables", {}).get(name)
        if not meta or (str(name).startswith("mixed_") and s["id"] in ("exposures", "exposure_models")):
            if meta:
                linked.append(meta)  # shown with their fits
            continue
        (shown if meta.get("show", True) else linked).append(meta)
    frames = [(meta, _read_table(out, meta)) for meta in shown]
    # short tables, then the figures, then long tables: a figure is never pushed below a page-long table
    for meta, df in [(m, df) for m, df in frames if len(df) <= LONG_TABLE_ROWS]:
        h.append(_shown_table(meta, df))
    h.append(_items_html(s.get("items", [])))
    for name in s.get("figures", []):
        f = res.get("figures", {}).get(name)
        if f:
            link = _esc(href(str(_file(out, f["file"], f"figures.{name}").relative_to(out).as_posix())))
            h.append(f"<figure><a href='{link}'><img src='{link}' alt='{_esc(name)}'></a>"
                     f"<figcaption>{_esc(f.get('caption', ''))}</figcaption></figure>")
    for meta, df in [(m, df) for m, df in frames if len(df) > LONG_TABLE_ROWS]:
        h.append(_shown_table(meta, df))
    if linked:
        for m in linked:
            _file(out, m["file"], f"table {m.get('title', '')!r}")
        h.append("<p class=small>Tables as CSV: " + " · ".join(
            f"<a href='{_esc(href(m['file']))}'>{_esc(m.get('title', m['file']))}</a> ({_esc(m.get('rows', '?'))} rows)"
            for m in linked) + "</p>")
    return h


LONG_TABLE_ROWS = 20  # a table longer than this comes after the section's figures


def _shown_table(meta: dict, df: pd.DataFrame) -> str:
    return (f"<h3>{_esc(meta.get('title', ''))}</h3>"
            f"{table_html(df, meta.get('index', False), meta.get('transpose', False))}"
            f"<p class=small>CSV: <a href='{_esc(href(meta['file']))}'>{_esc(meta['file'])}</a></p>")


def _md(text: str) -> str:
    """Escape, then turn `code` spans into <code> (the only markup section texts use)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
