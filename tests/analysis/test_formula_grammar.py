"""Twinlab's formula grammar (analysis/stats/formula.py) without R: what it accepts and how it writes it for R,
the tree's parts (variables, groups, slopes), sum coding on the tree; and `--gap`
pairs parsed and checked against the protocols there are, the API checking its inputs as the CLI does
and never writing among the data."""
from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis import api
from analysis.measures.demand_gap import GapError, check_pairs, parse_pair
from analysis.stats import formula as fm
from tests.support import design_synthetic as ds

RUN = CliRunner()

# (as written, as R receives it, its columns)
ACCEPTED = [
    ("correct ~ a * b + (1 + a | subject) + (1 | item)", "correct ~ a * b + (1 + a | subject_id) + (1 | item)",
     ["correct", "a", "b", "subject_id", "item"]),
    ("log(rt_ms) ~ x + (1 + x || subject_id)", "log(rt_ms) ~ x + (1 + x || subject_id)", ["rt_ms", "x", "subject_id"]),
    ("y ~ 0 + a:b + a %in% b", "y ~ 0 + a:b + a %in% b", ["y", "a", "b"]),
    ("y ~ (a+b+c)^2 - 1", "y ~ (a + b + c)^2 - 1", ["y", "a", "b", "c"]),
    ("y ~ -1 + x", "y ~ -1 + x", ["y", "x"]),
    ("y ~ a/b", "y ~ a/b", ["y", "a", "b"]),
    ("y ~ poly(x, 2) + scale(z) + log(x + 1)", "y ~ poly(x, 2) + scale(z) + log(x + 1)", ["y", "x", "z"]),
    ("y ~ I(x^2 / 2 - 3*z) + I(-x^2) + I((x+1)^2) + "
     "I(2^-x)", "y ~ I(x^2/2 - 3 * z) + I(-x^2) + I((x + 1)^2) + I(2^(-x))",
     ["y", "x", "z"]),
    ("y ~ I(log(x) * scale(z))", "y ~ I(log(x) * scale(z))", ["y", "x", "z"]),
    ("I(rt_ms / 1000) ~ `odd name` + `if` + `_x` + .b", "I(rt_ms/1000) ~ `odd name` + `if` + `_x` + `.b`",
     ["rt_ms", "odd name", "if", "_x", ".b"]),
    ("y ~ 1", "y ~ 1", ["y"]),
    ("y ~ a * b - a:b", "y ~ a * b - a:b", ["y", "a", "b"]),
    ("y ~ x + I(1.5e-3 * x) + I(.5 * x)", "y ~ x + I(1.5e-3 * x) + I(.5 * x)", ["y", "x"]),
    ("y ~ a\n  + b\t+ (1 | g)", "y ~ a + b + (1 | g)", ["y", "a", "b", "g"]),
]


@pytest.mark.parametrize("text,r_text,columns", ACCEPTED)
def test_accepted_formulas_are_written_for_r_from_the_tree(text, r_text, columns):
    f = fm.parse(text)
    assert f.r_text() == r_text
    assert f.variables == columns
    assert fm.parse(f.r_text()).r_text() == r_text  # what R receives is in the grammar too


def test_random_terms_slopes_and_the_fallback_sequence():
    f = fm.parse("correct ~ a * b + (1 + a | subject) + (0 + b || item) + (1 | list)")
    assert [(r.lhs, r.group, r.double_bar, r.has_slopes) for r in f.random] == [
        ("1 + a", "subject_id", False, True), ("0 + b", "item", True, True), ("1", "list", False, False)]
    assert f.groups == ["subject_id", "item", "list"] and f.fixed == "a * b"
    steps = fm.simpler_structures(f)
    assert steps[0][1].r_text() == "correct ~ a * b + (1 + a || subject_id) + (0 + b || item) + (1 | list)"
    assert steps[1][1].r_text() == "correct ~ a * b + (1 | subject_id) + (1 | item) + (1 | list)"
    assert fm.parse("y ~ x").random == [] and fm.parse("y ~ x").r_text() == "y ~ x"


@pytest.mark.parametrize("text,message", [
    ("correct a + b", "needs exactly one '~'"),
    ("~ a", "no response"),
    ("correct ~", "no predictors"),
    ("correct ~ a + (1 | subject", "unbalanced parentheses"),
    ("correct ~ a)", "unbalanced parentheses"),
    ("correct ~ a + (1 | a + b)", "grouping factor after '|' must be one column"),
    ("correct ~ a * (1 | s)", "a term of its own"),
    ("correct ~ ((1 | s))", "a term of its own"),
    ("correct ~ a - (1 | s)", "cannot be subtracted"),
    ("a + b ~ c", "the response 'a + b' is not one column"),
    ("poly(x, 2) ~ c", "refused 'poly' at character 1"),
    ("correct ~ 2 + a", "refused '2' at character 11"),
    ("y ~ a^b", "whole number"),
    ("y ~ poly(x, 0)", "degree is a whole number from 1 to 10"),
    ("y ~ poly(x)", "poly(x, k)"),
    ("y ~ I(a:b)", "refused ':'"),
    ("y ~ log(x, 2)", "log() takes one argument"),
    ("y ~ .", "'.' (every other column)"),
    ("y ~ 1L", "not a number"),
    ("y ~ exp(x)", "allowed in a formula: I(), log(), scale(), poly()"),
    ("y ~ I(poly(x, 2))", "allowed inside a transformation: I(), log(), scale()"),
    ("y ~ x +", "a term is missing"),
])
def test_what_is_not_a_formula_is_refused_naming_it(text, message):
    with pytest.raises(fm.FormulaError) as e:
        fm.parse(text)
    assert message in str(e.value)


def test_names_are_bare_or_backticked_and_reserved_words_never_bare():
    assert fm.quote("head_number") == "head_number" and fm.quote("a.b") == "a.b"
    for name in ("if", "TRUE", "NA", "function", "Inf", "_a", ".a", "2x", "a b", "a-b", "x y"):
        assert fm.quote(name) == f"`{name}`"
    assert fm.names_in("a * b + (1 | subject)") == ["a", "b", "subject_id"]
    assert fm.names_in("y ~ I(x^2) + `z z`") == ["y", "x", "z z"]


def test_sum_coding_rewrites_the_tree_and_refuses_a_factor_inside_a_transformation():
    d = pd.DataFrame({"y": [0, 1, 1, 0, 1, 0], "c": ["x", "y", "z", "x", "y", "z"], "n": [1., 2, 3, 4, 5, 6],
                      "subject_id": list("ssssss")})
    data, coded, _ = fm.sum_code(d, fm.parse("y ~ c * n + (1 + c | subject)"), {"c": ["z", "y", "x"]})
    assert coded.r_text() == "y ~ (c1 + c2) * n + (1 + (c1 + c2) | subject_id)"
    assert coded.variables == ["y", "c1", "c2", "n", "subject_id"]
    with pytest.raises(fm.FormulaError, match="'c' is a factor .* needs a numeric column"):
        fm.sum_code(d, fm.parse("y ~ I(c^2)"), {})
    with pytest.raises(fm.FormulaError, match="coded column 'c1' is also a column"):
        fm.sum_code(d.assign(c1=1.0), fm.parse("y ~ c"), {})


# ---- --gap and the API -------------------------------------------------------------------
def test_gap_pairs_any_protocol_name():
    assert parse_pair("direct=>meta") == ("direct", "meta")
    assert parse_pair("direct:meta") == ("direct", "meta")
    assert parse_pair("meta:question=>meta:instruct") == ("meta:question", "meta:instruct")
    assert parse_pair(" direct => meta:q ") == ("direct", "meta:q")
    for bad, msg in (("a:b:c", "more than one ':'"), ("direct", "write LOW=>HIGH"), ("=>meta", "empty"),
                     ("a=>b=>c", "one '=>'"), ("direct:", "empty")):
        with pytest.raises(GapError, match=msg):
            parse_pair(bad)


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    """People and one model under two protocols (one of them with ':' in its name)."""
    root = tmp_path_factory.mktemp("gap")
    ds.agreement_judgments(root / "humans", n_subjects=4, n_items=8)
    ds.agreement_judgments(root / "direct", n_subjects=2, n_items=8, kind="model", protocol="direct", model="m", seed=5)
    ds.agreement_judgments(root / "meta", n_subjects=2, n_items=8, kind="model", protocol="meta:question", model="m",
                           seed=6)
    return root


def test_gap_pairs_are_checked_against_the_protocols_there_are(groups):
    df = api.load_sessions([groups / "humans", groups / "direct", groups / "meta"])
    assert check_pairs(df, [("direct", "meta:question"), ("direct", "meta:question")]) == [("direct", "meta:question")]
    for pair, msg in ((("direct", "direct"), "a pair of one protocol"),
                      (("direct", "meta"), "unknown protocol 'meta'; the protocols there are: direct, meta:question"),
                      (("Direct", "meta:question"), "unknown protocol 'Direct'")):
        with pytest.raises(GapError, match=msg):
            check_pairs(df, [pair])
        with pytest.raises(GapError, match=msg):
            api.demand_gaps(df, [pair], n_boot=10)
    gp = api.demand_gaps(df, [("direct", "meta:question")], n_boot=50)
    assert len(gp) == 1 and (gp["low_demand"].iloc[0], gp["high_demand"].iloc[0]) == ("direct", "meta:question")
    # a model and a context that ran only one of the two: named, not silently empty
    humans_and_direct = api.load_sessions([groups / "humans", groups / "direct"])
    with pytest.raises(GapError, match="unknown protocol 'meta:question'; the protocols there are: direct"):
        check_pairs(humans_and_direct, [("direct", "meta:question")])


def test_analyze_refuses_a_bad_gap_before_work(groups, tmp_path):
    from experiments.cli import app

    data = [str(groups / "humans"), str(groups / "direct"), str(groups / "meta")]
    for gap, msg in (("direct=>meta", "unknown protocol 'meta'; the protocols there are: direct, meta:question"),
                     ("direct:direct", "a pair of one protocol"),
                     ("direct:meta:question", "more than one ':'"),
                     ("nothing", "write LOW=>HIGH")):
        out = tmp_path / gap.replace(":", "_").replace("=>", "__")
        r = RUN.invoke(app, ["analyze", *data, "--out", str(out), "--no-mixed", "--n-boot", "20", "--gap", gap])
        text = " ".join(r.output.split())
        assert r.exit_code == 2 and msg in text and "Traceback" not in text, text
        assert not (out / "results.json").exists()


@pytest.mark.slow
def test_analyze_reports_the_named_gap_with_a_colon_in_a_protocol(groups, tmp_path):
    from experiments.cli import app

    data = [str(groups / "humans"), str(groups / "direct"), str(groups / "meta")]
    out = tmp_path / "ok"
    r = RUN.invoke(app, ["analyze", *data, "--out", str(out), "--no-mixed", "--n-boot", "20",
                         "--gap", "direct=>meta:question"])
    assert r.exit_code == 0, r.output
    t = pd.read_csv(out / "tables" / "demand_gap_pairs.csv")
    assert t[["low_demand", "high_demand"]].values.tolist() == [["direct", "meta:question"]]


def test_api_checks_its_inputs_as_the_cli_does(groups):
    df = api.load_sessions(groups / "humans")
    with pytest.raises(api.InputError, match=r"outcome 'response' is text \(e.g. '(yes|no)'\)"):
        api.rates(df, outcome="response")
    with pytest.raises(api.InputError, match="outcome: unknown column 'corect' \\(did you mean 'correct'\\?\\)"):
        api.rates(df, outcome="corect")
    with pytest.raises(api.InputError, match=r"n_boot \(--n-boot\) must be from 1 to 100,000"):
        api.rates(df, n_boot=0)
    with pytest.raises(api.InputError, match=r"seed \(--seed\) must be a whole number"):
        api.acceptance(df, by="head_number", seed="x")
    with pytest.raises(api.InputError, match="family must be"):
        api.fit(df, "correct ~ head_number", family="poisson")
    with pytest.raises(api.InputError, match="df: a table of trials"):
        api.rates("not a frame")
    r = api.rates(df, by="head_number", outcome="correct", n_boot=20)
    assert len(r) == 2


def test_api_report_never_writes_among_the_data(groups, tmp_path):
    from experiments.options import OptionError

    df = api.load_sessions(groups / "humans")
    data_dir = groups / "humans" / "data"
    before = sorted(p.name for p in data_dir.iterdir())
    for out in (data_dir, groups / "humans", data_dir / "results", groups):
        for data in (df, groups / "humans"):
            with pytest.raises(OptionError, match="holds the data analysed"):
                api.report(data, out, force=True, mixed=False, n_boot=10)
    assert sorted(p.name for p in data_dir.iterdir()) == before
    assert not (groups / "humans" / "results.json").exists() and not (data_dir / "results").exists()
    # beside the data folder (a dataset's results/) is fine: the data stay untouched
    res = api.report(groups / "humans", groups / "humans" / "results", mixed=False, n_boot=10)
    assert res["tables"] and sorted(p.name for p in data_dir.iterdir()) == before
    with pytest.raises(api.InputError, match="unknown option 'nboot'"):
        api.report(df, tmp_path / "r", nboot=10)
    res = api.report(df, tmp_path / "r", mixed=False, n_boot=10)
    assert (tmp_path / "r" / "results.json").exists() and res["tables"]
    with pytest.raises(OptionError, match="earlier analysis"):
        api.report(df, tmp_path / "r", mixed=False, n_boot=10)


def test_a_gap_on_data_without_those_protocols_is_refused_not_ignored(tmp_path):
    """A Lakretz design of people: no protocol to pair; --gap is refused, never silently ignored."""
    from analysis.pipeline import Options, run_analysis
    from analysis.simulate import ErrorModel, logit, simulate_sessions

    simulate_sessions(tmp_path / "h", 2, error_model=ErrorModel(default_logit=logit(0.3), slope=0.0, subject_sd=0.3),
                      seed=1, sessions=1, mark_simulated=False)
    with pytest.raises(GapError, match="unknown protocol 'direct'; the protocols there are: none"):
        run_analysis([tmp_path / "h"], tmp_path / "out", Options(n_boot=10, show_progress=False, mixed=False,
                                                                 gap_pairs=[("direct", "meta")]))
    assert not (tmp_path / "out" / "results.json").exists()
