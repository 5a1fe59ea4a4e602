"""Which coefficients a power simulation tests: `--term` as written in the formula, or a coefficient's name.

Why by the variables a term reads: after sum coding, the formula's `a:b` is the coefficient `a:b` when both
factors have two levels, and `a1:b`, `a2:b` when `a` has three; a numeric `x` stays `x`. A term written
`a:b` (or `b:a`) therefore names every coefficient whose parts come from exactly the variables a and b, as
R's `assign` attribute groups them; one df is tested with a Wald z, several with a Wald chi-square (or the
likelihood-ratio test, either way named). A coefficient's own name (`a1`, `a1:b`) names that one alone.
"""
from __future__ import annotations

from analysis.stats import formula as fm
from stimuli.input_rules import is_ascii_digits


class TermError(ValueError):
    """--term is not a term of the formula, or --effect cannot be set on it (the message says which)."""


def term_variables(term: str) -> list[str]:
    """The variables of a term written as a name or an interaction (a, a:b); '*' and others refused."""
    if not isinstance(term, str) or not term.strip():
        raise TermError("--term is empty: name a term of the formula (e.g. attractor_number or a:b)")
    try:
        f = fm.parse(f"y__ ~ {term}")
    except fm.FormulaError as exc:
        raise TermError(f"--term {term!r} is not a term: {exc}") from None
    tree = f.fixed_tree
    if f.random or tree is None or any(isinstance(n, fm.BinOp) and n.op != ":" for n in fm.walk(tree)) \
            or any(isinstance(n, (fm.Neg, fm.Paren, fm.Num)) for n in fm.walk(tree)):
        raise TermError(f"--term {term!r}: name one term, a column or an interaction written with ':' (e.g. a:b), "
                        "not a sum, product or random term")
    return fm.node_names(tree)


def check_in_formula(term: str, formula: fm.Formula) -> list[str]:
    """Before any data or R: the term's variables are fixed-effect variables of the formula (a coefficient
    name such as a1 passes when its factor a is one). Returns the term's variables."""
    fixed = fm.node_names(formula.fixed_tree)
    names = term_variables(term)
    for n in names:
        if n not in fixed and not any(n.startswith(v) and is_ascii_digits(n[len(v):]) for v in fixed):
            raise TermError(f"--term {term!r}: {n!r} is not in the fixed effects of the formula "
                            f"({formula.fixed or '1'}); its variables are {', '.join(fixed) or 'none'}")
    return names


def _sources(coefficient: str, codings: list[fm.Coding]) -> frozenset[str] | None:
    """The variables a coefficient is built from (None for parts that are not plain columns, e.g. poly())."""
    column_of = {c: cod.factor for cod in codings for c in cod.columns}
    out = set()
    for part in coefficient.split(":"):
        if part in column_of:
            out.add(column_of[part])
        elif fm.PLAIN_NAME.fullmatch(part) or part.startswith("`"):
            out.add(part.strip("`"))
        else:
            return None
    return frozenset(out)


def resolve(term: str, coefficients: list[str], codings: list[fm.Coding]) -> list[str]:
    """The coefficients `term` names (module docstring); TermError listing the terms there are."""
    plain = term.replace(" ", "")
    if plain in coefficients and plain != "(Intercept)":
        return [plain]
    names = frozenset(term_variables(term))
    hits = [c for c in coefficients if c != "(Intercept)" and _sources(c, codings) == names]
    if not hits:
        shown = ", ".join(c for c in coefficients if c != "(Intercept)") or "none"
        raise TermError(f"--term {term!r} is not a term of the formula; its coefficients are: {shown}")
    return hits


def check_effect(term: str, coefficients: list[str], codings: list[fm.Coding]) -> None:
    """--effect sets one coefficient: a term of a factor with more than two levels must name its contrast."""
    if len(coefficients) == 1:
        return
    many = [c for c in codings if len(c.levels) > 2 and c.factor in set(term_variables(term))]
    what = (f"factor {many[0].factor!r} has {len(many[0].levels)} levels ({', '.join(many[0].levels)}; sum-coded "
            f"columns {', '.join(many[0].columns)})") if many else f"it has {len(coefficients)} coefficients"
    raise TermError(f"--effect for --term {term!r}: {what}; --effect sets one coefficient, so name the contrast "
                    f"as --term, one of: {', '.join(coefficients)}")
