"""A user's lme4 formula: parsed, checked against the table, and its factors sum-coded.

Why parse it here rather than hand it to R as it is: a misspelt column must be refused before any
work with a message naming it (R would say "object 'x' not found" after starting); `subject` is an
alias the analyst expects; and the random-effects fallback needs the formula's terms.

Sum coding (contr.sum, the default here, said so in every output): a factor with levels l1..lk (the
spec's order) becomes k-1 numeric columns; column j is +1 for level j, -1 for the last level, 0
otherwise. A two-level factor keeps its own name (+1 first level, -1 second) so its coefficient reads
`head_number`; a k-level factor's columns are named `a1`..`a(k-1)`, and the formula's `a` becomes
`(a1 + ... + a(k-1))`. Intercepts are then grand means and main effects are averaged over the other
factors' levels (not simple effects at a reference level). Numeric predictors are used as they are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

ALIASES = {"subject": "subject_id"}
NAME = r"[A-Za-z_.][A-Za-z0-9_.]*"
R_WORDS = {"I", "log", "exp", "sqrt", "factor", "scale", "poly", "offset", "TRUE", "FALSE", "T", "F"}
RT_PATTERN = re.compile(r"(^rt($|_)|_rt($|_)|rts?_ms$|_ms$)")


class FormulaError(ValueError):
    """A formula that cannot be fitted to this table; the message names the problem."""


@dataclass
class RandomTerm:
    lhs: str  # "1", "1 + a", "0 + a"
    group: str
    double_bar: bool = False

    def text(self) -> str:
        return f"({self.lhs} {'||' if self.double_bar else '|'} {self.group})"

    @property
    def has_slopes(self) -> bool:
        return any(t.strip() not in ("1", "0", "") for t in re.split(r"\+", self.lhs))


@dataclass
class Formula:
    """`response ~ fixed + (random | group) ...` split into its parts (aliases resolved)."""

    text: str
    response: str  # as written, e.g. correct or log(rt_ms)
    response_var: str  # the column, e.g. rt_ms
    fixed: str
    random: list[RandomTerm] = field(default_factory=list)

    @property
    def variables(self) -> list[str]:
        """Every column the formula reads (response, predictors, grouping factors), in order."""
        out = [self.response_var] + names_in(self.fixed)
        for r in self.random:
            out += names_in(r.lhs) + [r.group]
        return list(dict.fromkeys(v for v in out if v))

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(r.group for r in self.random))

    def with_random(self, random: list[RandomTerm]) -> "Formula":
        return Formula(self.text, self.response, self.response_var, self.fixed, random)

    def r_text(self, response: str | None = None) -> str:
        rhs = " + ".join([self.fixed or "1"] + [r.text() for r in self.random])
        return f"{response or self.response} ~ {rhs}"


def names_in(expr: str) -> list[str]:
    """Variable names of an R formula expression (function names, numbers and R words left out)."""
    out = []
    for m in re.finditer(NAME, expr):
        name = m.group(0)
        after = expr[m.end():].lstrip()
        if name in R_WORDS or after.startswith("("):
            continue
        out.append(name)
    return out


def _alias(expr: str) -> str:
    for a, col in ALIASES.items():
        expr = re.sub(rf"(?<![A-Za-z0-9_.]){re.escape(a)}(?![A-Za-z0-9_.])", col, expr)
    return expr


def _top_level_groups(rhs: str) -> list[tuple[int, int]]:
    """Spans of the top-level parenthesised groups of the right-hand side."""
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(rhs):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise FormulaError("unbalanced parentheses: a ')' without its '('")
            if depth == 0:
                spans.append((start, i + 1))
    if depth:
        raise FormulaError("unbalanced parentheses: a '(' is never closed")
    return spans


def parse(text: str) -> Formula:
    """Split a formula into response, fixed part and random terms; `subject` means `subject_id`."""
    if text.count("~") != 1:
        raise FormulaError(f"formula {text!r} needs exactly one '~' (response ~ predictors)")
    lhs, rhs = (s.strip() for s in _alias(text).split("~"))
    if not lhs:
        raise FormulaError(f"formula {text!r} has no response left of '~'")
    resp_vars = names_in(lhs)
    if len(resp_vars) != 1:
        raise FormulaError(f"formula {text!r}: the response must be one column (e.g. correct or log(rt_ms))")
    random, fixed_parts, last = [], [], 0
    for a, b in _top_level_groups(rhs):
        inner = rhs[a + 1:b - 1]
        if "|" not in inner:
            continue
        fixed_parts.append(rhs[last:a])
        last = b
        double = "||" in inner
        left, group = (s.strip() for s in inner.split("||" if double else "|", 1))
        if not re.fullmatch(NAME, group):
            raise FormulaError(f"random term ({inner}): the grouping factor must be one column, not {group!r}")
        random.append(RandomTerm(left or "1", group, double))
    fixed_parts.append(rhs[last:])
    fixed = re.sub(r"\s+", " ", "".join(fixed_parts))
    fixed = re.sub(r"(\+\s*)+", "+ ", fixed)
    fixed = fixed.strip().strip("+").strip()
    return Formula(text, lhs, resp_vars[0], fixed, random)


def check_columns(formula: Formula, columns: list[str]) -> None:
    """Every variable of the formula must be a column of the table (the message lists what exists)."""
    missing = [v for v in formula.variables if v not in columns]
    if missing:
        import difflib

        guess = difflib.get_close_matches(missing[0], columns, n=1)
        hint = f" (did you mean {guess[0]!r}?)" if guess else ""
        raise FormulaError(f"--formula {formula.text!r}: unknown column {missing[0]!r}{hint}; the table's columns "
                           f"usable in a formula include: {', '.join(sorted(usable_columns(columns)))}")


def usable_columns(columns: list[str]) -> list[str]:
    """The columns worth naming in a message (design, outcomes, predictors), not bookkeeping ones."""
    skip = {"spec_hash", "sequence_hash", "started_at", "ended_at", "extra", "source_file", "session_status",
            "word_onsets_ms", "word_durations_ms", "materials", "feedback_text", "rsvp_units", "keystrokes",
            "in_results_table", "order_known"}
    return [c for c in columns if c not in skip]


@dataclass
class Coding:
    """How one factor was coded: its levels and its numeric columns (column -> level -> code)."""

    factor: str
    levels: list[str]
    columns: dict[str, dict[str, int]]

    def text(self) -> str:
        return "; ".join(f"{c}: " + ", ".join(f"{lv} = {v:+d}" for lv, v in codes.items())
                         for c, codes in self.columns.items())


def is_factor(s: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s) or str(s.dtype) == "boolean"


def factor_levels(s: pd.Series, declared: list[str] | None = None) -> list[str]:
    """Levels in the spec's declared order, then any others in sorted order (booleans: true, false)."""
    vals = s.dropna()
    if pd.api.types.is_bool_dtype(vals) or str(vals.dtype) == "boolean":
        vals = vals.map(lambda b: "true" if bool(b) else "false")
    present = sorted(set(vals.astype(str)))
    order = [lv for lv in (declared or (["true", "false"] if set(present) <= {"true", "false"} else [])) if lv in present]
    return order + [lv for lv in present if lv not in order]


def sum_code(data: pd.DataFrame, formula: Formula, declared: dict[str, list[str]] | None = None
             ) -> tuple[pd.DataFrame, Formula, list[Coding]]:
    """Replace the formula's factor predictors by sum-coded numeric columns (grouping factors stay text)."""
    declared = declared or {}
    predictors = [v for v in dict.fromkeys(names_in(formula.fixed) + [n for r in formula.random for n in names_in(r.lhs)])
                  if v != formula.response_var and v not in formula.groups]
    d = data.copy()
    codings: list[Coding] = []
    rename: dict[str, str] = {}
    for v in predictors:
        if not is_factor(d[v]):
            continue
        text = d[v].map(lambda x: x if pd.isna(x) else ("true" if x is True else "false" if x is False else str(x)))
        levels = factor_levels(d[v], declared.get(v))
        if len(levels) < 2:
            raise FormulaError(f"--formula: factor {v!r} has only one level in the rows fitted "
                               f"({levels[0] if levels else 'none'}); drop it from the formula")
        k = len(levels)
        names = [v] if k == 2 else [f"{v}{j + 1}" for j in range(k - 1)]
        cols = {}
        for j, name in enumerate(names):
            codes = {lv: (1 if i == j else -1 if i == k - 1 else 0) for i, lv in enumerate(levels)}
            d[name] = text.map(codes).astype(float)
            cols[name] = codes
        codings.append(Coding(v, levels, cols))
        if k > 2:
            rename[v] = "(" + " + ".join(names) + ")"
    def sub(expr: str) -> str:
        for v, repl in rename.items():
            expr = re.sub(rf"(?<![A-Za-z0-9_.]){re.escape(v)}(?![A-Za-z0-9_.(])", repl, expr)
        return expr
    coded = Formula(formula.text, formula.response, formula.response_var, sub(formula.fixed),
                    [RandomTerm(sub(r.lhs), r.group, r.double_bar) for r in formula.random])
    return d, coded, codings


def simpler_structures(formula: Formula) -> list[tuple[str, Formula]]:
    """The fallback sequence after the maximal random effects: without correlations (`||`), then
    random intercepts only. Each step named; steps that change nothing are skipped."""
    steps: list[tuple[str, Formula]] = []
    if any(r.has_slopes and not r.double_bar for r in formula.random):
        steps.append(("no correlations between random effects (||)",
                      formula.with_random([RandomTerm(r.lhs, r.group, r.has_slopes) for r in formula.random])))
    if any(r.has_slopes for r in formula.random):
        steps.append(("random intercepts only", formula.with_random([RandomTerm("1", g) for g in formula.groups])))
    return steps


def is_rt(name: str) -> bool:
    """A response time column (fitted on a log scale unless the formula says otherwise)."""
    return bool(RT_PATTERN.search(name))
