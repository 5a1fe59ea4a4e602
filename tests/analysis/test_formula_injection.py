"""Formulas are data, never code (point 1): a table of injection attempts, each refused before
R starts — by the parser, by `twinlab analyze --formula` (exit 2, the token named, nothing written), by
`--family ordinal`, by `analysis.api.fit` and `api.report`, and by the fits twinlab builds from factor
names — and in every case the payload's file was never created.

No R is needed: R's start is replaced by a tripwire that fails the test, so a refusal that came from R
(or after R started) cannot pass. The payloads are real R: handed to R as text, each would run
`touch <file>` (as `I(system(intToUtf8(...)))` did before this parser existed)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis import api
from analysis.stats import formula as fm
from tests.support import design_synthetic as ds

RUN = CliRunner()


def _codes(text: str) -> str:
    return ",".join(str(ord(c)) for c in text)


def cases(target: Path) -> list[tuple[str, str]]:
    """(formula, what the refusal must name) — every variant of the issue and the list of the brief."""
    cmd = f"touch {target}"
    P = f"system(intToUtf8(c({_codes(cmd)})))"  # a shell command without a quote in it
    S = f"str2lang(intToUtf8(c({_codes('system(' + repr(cmd) + ')')})))"
    return [
        (f"correct ~ grammatical + I({P})", "'system' at character 27"),  # the issue's own
        (f"correct ~ grammatical + {P}", "'system'"),
        (f"I({P}) ~ grammatical", "'system' at character 3"),  # through the response
        (f"{P} ~ grammatical", "'system' at character 1"),
        (f"correct ~ grammatical + (1 + I({P}) | subject)", "'system'"),  # a random slope
        (f"correct ~ grammatical + (1 | subject) + (0 + {P} || item)", "'system'"),
        (f"correct ~ grammatical + `system`(intToUtf8(c({_codes(cmd)})))", "backticked name"),  # backticked call
        (f"correct ~ grammatical + I(`system`(intToUtf8(c({_codes(cmd)}))))", "backticked name"),
        (f"correct ~ `I`({P})", "backticked name"),
        (f"correct ~ grammatical + eval({S})", "'eval'"),
        (f"correct ~ grammatical + I(eval({S}))", "'eval'"),
        (f"correct ~ grammatical; {P}", "';'"),
        (f"correct ~ grammatical + (x <- {P})", "'<-'"),
        (f"correct ~ grammatical + ({P} -> x)", "'system'"),
        (f"correct ~ base::{P}", "'::'"),
        (f"correct ~ base:::{P}", "'::'"),
        ("correct ~ grammatical + x$y", "'$'"),
        ("correct ~ grammatical + x@y", "'@'"),
        ("correct ~ grammatical + I(x\\u0073ystem)", "a backslash"),
        ("correct ~ grammatical + `x\\`", "backticked name"),
        (f"correct ~ grammatical + I(system('{cmd}'))", "'system'"),
        (f"correct ~ grammatical + '{cmd}'", "a quoted string"),
        (f'correct ~ grammatical + "{cmd}"', "a quoted string"),
        (f"correct ~ grammatical + ｓystem(intToUtf8(c({_codes(cmd)})))", "FULLWIDTH LATIN SMALL LETTER S"),
        ("correct ~ grammatical + \u0441ystem(1)", "CYRILLIC SMALL LETTER ES"),  # Cyrillic 'с'
        ("correct ~ gr\u0430mmatical", "CYRILLIC SMALL LETTER A"),
        (f"correct ~ grammatical + ~{P}", "'~'"),  # ~ inside a term
        (f"correct ~ grammatical + I(~{P})", "'~'"),
        (f"correct ~ grammatical + x[{P}]", "'['"),
        (f"correct ~ grammatical + {{{P}}}", "'{'"),
        (f"correct ~ grammatical + x %o% {P}", "'%o%'"),
        ("correct ~ grammatical + (function(x) x)(1)", "'function'"),
        ("correct ~ grammatical + do.call(intToUtf8(c(115,121,115,116,101,109)), list(1))", "'do.call'"),
        (f"correct ~ grammatical + local({P})", "'local'"),
        (f"correct ~ grammatical + factor({P})", "'factor'"),
        (f"correct ~ grammatical + log({P})", "'system'"),  # an allowed transformation around a call
        (f"correct ~ grammatical + poly({P}, 2)", "'system'"),
        (f"correct ~ grammatical + scale(x, {P})", "scale() takes one argument"),
        (f"correct ~ grammatical + (1 | {P})", "grouping factor"),
        (f"correct ~ grammatical + I(x = {P})", "'='"),
        (f"correct ~ grammatical\n; {P}", "';'"),
        (f"correct ~ grammatical # {P}", "'#'"),
        ("correct ~ grammatical + 0x1F", "not a number"),
    ]


@pytest.fixture()
def no_r(monkeypatch):
    """A tripwire on every way twinlab starts R: a refusal must come before it."""
    from analysis.stats import formula_fit, mixed, ordinal

    def tripped(*a, **k):
        raise AssertionError("R was started: the formula reached R")

    monkeypatch.setattr(mixed, "r_fitter", tripped)
    monkeypatch.setattr(formula_fit, "_fit_fn", tripped)
    monkeypatch.setattr(ordinal, "clmm_fitter", tripped)


@pytest.fixture(scope="module")
def humans(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inj")
    ds.agreement_judgments(root / "humans", n_subjects=4, n_items=8)
    return root / "humans"


def test_the_parser_refuses_every_injection_naming_the_token(tmp_path):
    target = tmp_path / "pwned"
    for text, token in cases(target):
        with pytest.raises(fm.FormulaError) as e:
            fm.parse(text)
        msg = str(e.value)
        assert token in msg, (text, msg)
        assert msg.startswith(("refused", "random term", "unbalanced")), msg
    assert not target.exists()


def test_analyze_refuses_every_injection_before_r_and_writes_nothing(humans, tmp_path, no_r):
    from experiments.cli import app

    target = tmp_path / "pwned"
    for k, (text, token) in enumerate(cases(target)):
        for family in [[]] + ([["--family", "ordinal"]] if k % 4 == 0 else []):
            out = tmp_path / f"out{k}{'o' if family else ''}"
            r = RUN.invoke(app, ["analyze", str(humans), "--out", str(out), "--formula", text, *family])
            text_out = " ".join(r.output.split())
            assert r.exit_code == 2, (text, r.exit_code, text_out)
            assert "Traceback" not in text_out and "--formula" in text_out and token in text_out, (text, text_out)
            assert not out.exists(), out
    assert not target.exists()


def test_the_api_refuses_every_injection_before_r(humans, tmp_path, no_r):
    from analysis.stats.formula_fit import fit_formula, fit_groups
    from analysis.stats.ordinal import fit_clmm

    target = tmp_path / "pwned"
    df = api.load_sessions(humans)
    for k, (text, token) in enumerate(cases(target)):
        calls = [lambda text=text: api.fit(df, text), lambda text=text: api.fit(df, text, family="ordinal"),
                 lambda text=text: api.fit_groups(df, text), lambda text=text: fit_formula(df, text),
                 lambda text=text: fit_groups(df, text), lambda text=text: fit_clmm(df, text)]
        if k % 5 == 0:  # the report: a few (each loads nothing before refusing, but is the longest path)
            calls.append(lambda k=k, text=text: api.report(df, tmp_path / f"rep{k}", formula=text))
            calls.append(lambda k=k, text=text: api.report(humans, tmp_path / f"rep{k}b", formula=text, mixed=True))
        for call in calls:
            with pytest.raises(fm.FormulaError, match=r"refused|random term|unbalanced") as e:
                call()
            assert token in str(e.value)
        assert not (tmp_path / f"rep{k}").exists()
    assert not target.exists()


def test_formulas_built_from_factor_names_are_quoted_or_refused(humans, tmp_path, no_r):
    """Factor names come from spec files and sidecars: a hostile one never becomes code. A name that is
    no plain R name is backticked (a name only); one that cannot be written as a name is refused."""
    import pandas as pd

    from analysis.stats.formula_fit import fit_formula
    from analysis.stats.ordinal import fit_clmm

    target = tmp_path / "pwned"
    evil = f"x) + I(system(intToUtf8(c({_codes('touch ' + str(target))})))) + (y"
    # twinlab's own builders write the factor into a formula as text; the parser stands in between
    from analysis.measures.reading import region_formula

    region, _ = region_formula([evil], pd.DataFrame({evil: ["a", "b"], "position": [1, 2]}))
    assert "system" in region  # the builder passed the name through as text
    for build in (f"rating ~ {evil} + (1 | subject_id) + (1 | item)", region,
                  f"rating ~ {evil.replace(')', '').replace('(y', 'y')} + (1 | item)"):
        with pytest.raises(fm.FormulaError, match="refused|unbalanced"):
            fit_clmm(pd.DataFrame({"rating": [1, 2]}), build)
        with pytest.raises(fm.FormulaError, match="refused|unbalanced"):
            fit_formula(pd.DataFrame({"rating": [1, 2]}), build)
    # quoted, the same name is a column name and nothing else
    q = fm.quote(evil)
    assert q == f"`{evil}`"
    f = fm.parse(f"rating ~ {q} + (1 | subject_id)")
    assert f.variables == ["rating", evil, "subject_id"] and f.r_text() == f"rating ~ {q} + (1 | subject_id)"
    with pytest.raises(fm.FormulaError, match="unknown column"):  # and it must be a column of the table
        fm.check_columns(f, ["rating", "subject_id"])
    for bad in ("a`b", "a\\b", "gr\u0430m", "a\nb", ""):
        with pytest.raises(fm.FormulaError, match="cannot be used in a formula"):
            fm.quote(bad)
    assert not target.exists()


def test_the_r_text_is_written_from_the_tree_not_the_users_text():
    """Spacing, aliases and parentheses come from the tree: what R receives is twinlab's writing."""
    f = fm.parse("correct~a*b+(1+a|subject)+ ( 1|item )")
    assert f.r_text() == "correct ~ a * b + (1 + a | subject_id) + (1 | item)"
    assert f.r_text() != f.text
    # the R text is itself in the grammar and reads back to the same tree
    for text in ("correct ~ a * b + (1 + a | subject)", "log(rt_ms) ~ poly(x, 2) + I((x + 1)^2/2) - 1",
                 "y ~ a %in% b + a:b + (a + b + c)^2 + `odd name` + (0 + x || item)"):
        g = fm.parse(text)
        again = fm.parse(g.r_text())
        assert again.r_text() == g.r_text() and again.lhs == g.lhs and again.fixed_tree == g.fixed_tree
