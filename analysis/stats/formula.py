r"""A user's lme4 formula: parsed by twinlab's own grammar, checked against the table, factors sum-coded,
and rebuilt for R from the parsed tree.

Why a grammar of its own: R evaluates a formula (`as.formula`, `model.frame`), so a formula handed to R
as text is code: `correct ~ x + I(system("..."))` runs a shell command. A formula is often copied from a
colleague, a preregistration or a config file; here it is data. The text is tokenised and parsed
(recursive descent, no eval) into a tree of column names, numbers, formula operators, random terms and
a short allow-list of transformations; anything else is refused with the token and its position before
R starts; the text R receives is written from the tree (column names bare or backticked), never the
user's. The grammar (docs/analysis/general-designs.md, "Your formula"):

    formula   := response '~' terms
    response  := value                     (one column, e.g. correct, log(rt_ms), I(rt_ms / 1000))
    terms     := ['+' | '-'] product (('+' | '-') product)*
    product   := nested (('*' | '/') nested)*
    nested    := inter ('%in%' inter)*
    inter     := power (':' power)*
    power     := atom ['^' integer]
    atom      := name | 0 | 1 | transform | '(' terms ')' | '(' terms ('|' | '||') name ')'
    transform := I(arith) | log(arith) | scale(arith) | poly(arith, integer)
    arith     := arithmetic (+ - * / ^, unary -, parentheses) of names, numbers, log(), scale(), I()
    name      := [A-Za-z._][A-Za-z0-9._]* | `any printable ASCII but ` and \`

Also here: `subject` is an alias of `subject_id`, a misspelt column is refused naming it, and the
random-effects fallback reads the formula's terms.

Sum coding (contr.sum, the default here, said so in every output): a factor with levels l1..lk (the
spec's order) becomes k-1 numeric columns; column j is +1 for level j, -1 for the last level, 0
otherwise. A two-level factor keeps its own name (+1 first level, -1 second) so its coefficient reads
`head_number`; a k-level factor's columns are named `a1`..`a(k-1)`, and the formula's `a` becomes
`(a1 + ... + a(k-1))`. Intercepts are then grand means and main effects are averaged over the other
factors' levels (not simple effects at a reference level). Numeric predictors are used as they are.
"""
from __future__ import annotations

import contextlib
import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterator

import pandas as pd

from stimuli.input_rules import is_ascii_digits

ALIASES = {"subject": "subject_id"}
TRANSFORMS = {"I": "I(x): arithmetic as written", "log": "log(x): natural logarithm",
              "scale": "scale(x): centred and divided by its "
                       "SD", "poly": "poly(x, k): orthogonal polynomial of degree k"}
ARITH_CALLS = ("I", "log", "scale")  # transformations allowed inside arithmetic (poly gives a matrix: a term only)
MAX_POLY = 10
MAX_LENGTH = 2000
MAX_NESTING = 32  # parentheses, transformations and signs inside one another (R's own parser overflows near 60)
MAX_TREE_DEPTH = 256  # operators chained in one formula tree (its text is written for R by recursion)
MAX_GROUPING = 10  # grouping parentheses nested in the text R reads: lme4's cost doubles with each (16: 25 s)
RT_PATTERN = re.compile(r"(^rt($|_)|_rt($|_)|rts?_ms$|_ms$)")
PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._]*")
R_RESERVED = {"if", "else", "repeat", "while", "function", "for", "next", "break", "in", "TRUE", "FALSE", "NULL",
              "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "NA_complex_"}
# characters with a meaning in R but none in a formula: refused with what they are
REFUSED_CHARS = {";": "';' (ends an R expression)", "$": "'$' (R element access)", "@": "'@' (R slot access)",
                 "\\": "a backslash", "'": "a quoted string", '"': "a quoted string", "<": "'<' (R assignment or "
                                                                                           "comparison)",
                 ">": "'>' (R assignment or "
                      "comparison)", "=": "'=' (R assignment or argument)", "!": "'!' (R negation)",
                 "&": "'&' (R logic)", "{": "'{' (R code block)", "}": "'}' (R code block)", "[": "'[' (R indexing)",
                 "]": "']' (R indexing)", "#": "'#' (R comment)", "?": "'?' (R help)"}


CONTRASTS_NOTE = ("factors are sum-coded (contr.sum: +1 for a level, -1 for the last level; the intercept is the "
                  "grand mean, a main effect is averaged over the other factors' levels)")


class FormulaError(ValueError):
    """A formula that cannot be fitted to this table or is not a formula; the message names the problem."""


class TooFewLevels(FormulaError):
    """A fit that needs two or more levels of a column whose rows hold fewer (one participant, one item, one
    condition): checked before R is asked, and said once for every fit it stops (`merge_level_notes`), not
    once per fit as R's "grouping factors must have > 1 sampled level"."""

    def __init__(self, column: str, levels: list[str], role: str):
        self.column, self.levels, self.role = column, [str(x) for x in levels], role
        shown = ", ".join(self.levels[:3]) or "none"
        super().__init__(f"--formula: {role} {column!r} has only one level in the rows fitted ({shown}); "
                         + ("a random effect needs two or more" if role == "grouping factor" else
                            "drop it from the formula"))

    def needs(self) -> str:
        """What the fit needs two or more of, in the user's words."""
        if self.column in ("subject_id", "subject", "subject_key", "participant"):
            return "people (subject_id)"
        if self.column in ("item", "item_id"):
            return f"items ({self.column})"
        return f"levels of {self.column}"


def check_groups(d: pd.DataFrame, groups: list[str]) -> None:
    """Every grouping factor of the random terms has two or more levels in the rows to fit (TooFewLevels)."""
    for g in groups:
        if g in d.columns:
            levels = sorted({str(x) for x in d[g].dropna()})
            if len(levels) < 2:
                raise TooFewLevels(g, levels, "grouping factor")


class LevelNote(str):
    """A report note saying a fit was not fitted for too few levels of a column; `merge_level_notes` says the
    notes of one column once."""

    label: str
    error: TooFewLevels


def level_note(label: str, exc: TooFewLevels) -> LevelNote:
    note = LevelNote(f"{label}: not fitted ({exc})")
    note.label, note.error = label, exc
    return note


def merge_level_notes(notes: list[str]) -> list[str]:
    """The fits stopped by too few levels of one column, said in one line naming them (where the first was),
    the other notes as they are."""
    by: dict[tuple[str, str], list[LevelNote]] = {}
    for n in notes:
        if isinstance(n, LevelNote):
            by.setdefault((n.error.column, n.error.role), []).append(n)
    out: list[str] = []
    for n in notes:
        if not isinstance(n, LevelNote):
            out.append(n)
            continue
        group = by.pop((n.error.column, n.error.role), None)
        if group:
            e = group[0].error
            labels = list(dict.fromkeys(x.label for x in group))
            held = f" ({', '.join(e.levels[:3])})" if e.role == "factor" and e.levels else ""
            out.append(f"not fitted, {len(labels)} fit(s) that need two or more {e.needs()}, and the rows fitted "
                       f"hold {len(e.levels)}{held}: " + "; ".join(labels))
    return out


class FormulaDepthError(FormulaError):
    """A formula nested deeper than MAX_NESTING or chained deeper than MAX_TREE_DEPTH (a FormulaError: exit 2)."""


# ---- tokens ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Token:
    kind: str  # name | qname (backticked) | num | op | end
    text: str
    pos: int  # 0-based offset in the formula text

    def where(self) -> str:
        return f"at character {self.pos + 1}"


DIGITS = "0123456789"
NUM_RE = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
NAME_RE = re.compile(r"[A-Za-z._][A-Za-z0-9._]*")


def _char_name(ch: str) -> str:
    try:
        return unicodedata.name(ch)
    except ValueError:
        return f"U+{ord(ch):04X}"


def tokenize(text: str) -> list[Token]:
    """The formula's tokens; any character or sequence outside the grammar is refused naming it and where."""
    toks, err = _tokens(text)
    if err is not None:
        raise err
    return toks


def _tokens(text: str) -> tuple[list[Token], FormulaError | None]:
    """The tokens before the first character outside the grammar, and that refusal (the parser raises it
    when it reaches it, so the first offending token in reading order is the one named)."""
    out: list[Token] = []
    try:
        _scan(text, out)
    except FormulaError as exc:
        return out, exc
    return out, None


def _scan(text: str, out: list[Token]) -> None:
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"formula is {len(text)} characters long; at most {MAX_LENGTH}")
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
            continue
        if ord(ch) < 32 or ord(ch) == 127:
            raise FormulaError(f"refused {ch!r} ({_char_name(ch)}) at character {i + 1}: a control character")
        if ord(ch) > 126:
            raise FormulaError(f"refused {ch!r} ({_char_name(ch)}) at character {i + 1}: a formula is written in "
                               "ASCII letters, digits and the operators + - * / ^ : %in% ( ) | ~ (look-alike letters "
                               "from other alphabets are not the column names they resemble)")
        if ch == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise FormulaError(f"refused '`' at character {i + 1}: the backticked name is never closed")
            inner = text[i + 1:j]
            bad = next((c for c in inner if c == "\\" or ord(c) < 32 or ord(c) > 126), None)
            if not inner.strip() or bad is not None:
                what = "an empty name" if bad is None else f"{bad!r} ({_char_name(bad)})"
                raise FormulaError(f"refused the backticked name {text[i:j + 1]!r} at character {i + 1}: {what}; a "
                                   "backticked name is printable ASCII without backslashes")
            out.append(Token("qname", inner, i))
            i = j + 1
            continue
        if ch in DIGITS or (ch == "." and i + 1 < n and text[i + 1] in DIGITS):
            m = NUM_RE.match(text, i)
            assert m
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] in "._"):
                raise FormulaError(f"refused {text[i:end + 1]!r} at character {i + 1}: not a number (write plain "
                                   "decimal numbers such as 2 or 0.5)")
            out.append(Token("num", m.group(0), i))
            i = end
            continue
        if ch.isalpha() or ch in "._":
            m = NAME_RE.match(text, i)
            assert m
            out.append(Token("name", m.group(0), i))
            i = m.end()
            continue
        if ch == "%":
            if text.startswith("%in%", i):
                out.append(Token("op", "%in%", i))
                i += 4
                continue
            j = text.find("%", i + 1)
            shown = text[i:j + 1] if j > 0 else text[i:]
            raise FormulaError(f"refused {shown!r} at character {i + 1}: the only %-operator of a formula is %in%")
        if ch == ":" and text.startswith("::", i):
            raise FormulaError(f"refused '::' at character {i + 1} (R namespace access): not part of a formula")
        if ch == "|" and text.startswith("||", i):
            out.append(Token("op", "||", i))
            i += 2
            continue
        if ch in "~+-*/^:()|,":
            out.append(Token("op", ch, i))
            i += 1
            continue
        if ch == "<" and text.startswith("<-", i):
            raise FormulaError(f"refused '<-' at character {i + 1} (R assignment): not part of a formula")
        what = REFUSED_CHARS.get(ch, f"{ch!r}")
        raise FormulaError(f"refused {what} at character {i + 1}: not part of a formula")
    out.append(Token("end", "", n))


# ---- the tree ---------------------------------------------------------------------------------------------
class Node:
    """A node of a parsed formula; `r()` writes it for R."""

    prec = 100

    def r(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Name(Node):
    name: str  # a column (aliases resolved)

    def r(self) -> str:
        return quote(self.name)


@dataclass(frozen=True)
class Num(Node):
    text: str

    def r(self) -> str:
        return self.text


@dataclass(frozen=True)
class Call(Node):
    fn: str  # one of TRANSFORMS
    args: tuple[Node, ...]

    def r(self) -> str:
        return f"{self.fn}({', '.join(a.r() for a in self.args)})"


@dataclass(frozen=True)
class Paren(Node):
    inner: Node

    def r(self) -> str:
        # parentheses around one column, number, call or parenthesis mean nothing and are not written: lme4
        # reads a formula's parentheses recursively at a cost that doubles with each level (20 levels: 50 s)
        if isinstance(self.inner, (Name, Num, Call, Paren)):
            return self.inner.r()
        return f"({self.inner.r()})"


PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%in%": 3, ":": 4, "neg": 5, "^": 6}
SHOW = {"+": " + ", "-": " - ", "*": " * ", "/": "/", "%in%": " %in% ", ":": ":", "^": "^"}


@dataclass(frozen=True)
class BinOp(Node):
    op: str
    left: Node
    right: Node

    @property
    def prec(self) -> int:  # type: ignore[override]
        return PREC[self.op]

    def r(self) -> str:
        p = PREC[self.op]
        right_assoc = self.op == "^"
        lt, rt = self.left.r(), self.right.r()
        if self.left.prec < p or (right_assoc and self.left.prec == p):
            lt = f"({lt})"
        if self.right.prec < p or (not right_assoc and self.right.prec == p):
            rt = f"({rt})"
        return lt + SHOW[self.op] + rt


@dataclass(frozen=True)
class Neg(Node):
    sign: str  # + or -
    operand: Node
    prec = PREC["neg"]

    def r(self) -> str:
        t = self.operand.r()
        if isinstance(self.operand, Neg):  # `- -x`, not `-(-x)`: no parentheses for lme4 to recurse into
            return f"{self.sign} {t}"
        return self.sign + (f"({t})" if self.operand.prec <= PREC["neg"] else t)


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Paren):
        return (node.inner,)
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, Neg):
        return (node.operand,)
    return ()


def walk(node: Node):
    """Every node of a tree, depth first, left to right (iterative: no recursion limit)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def tree_depth(node: Node | None) -> int:
    """The number of nodes on the longest path from `node` down (iterative)."""
    deepest, stack = 0, [(node, 1)] if node is not None else []
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in children(n))
    return deepest


def node_names(node: Node | None) -> list[str]:
    """Column names of a tree in order of appearance."""
    if node is None:
        return []
    return list(dict.fromkeys(n.name for n in walk(node) if isinstance(n, Name)))


def quote(name: str) -> str:
    """A column name as R reads it as a name: bare when it is a plain R name, else backticked. A name that
    cannot be written safely (backtick, backslash, control or non-ASCII characters) is refused."""
    if PLAIN_NAME.fullmatch(name) and name not in R_RESERVED:
        return name
    bad = next((c for c in name if c in "`\\" or ord(c) < 32 or ord(c) > 126), None)
    if bad is not None or not name:
        raise FormulaError(f"column name {name!r} cannot be used in a formula ({'empty' if not name else repr(bad)}); "
                           "rename the column")
    return f"`{name}`"


def summands(node: Node | None) -> list[tuple[str, Node]]:
    """The top-level terms of a sum with their signs ('+' or '-')."""
    if node is None:
        return []
    if isinstance(node, BinOp) and node.op in "+-" and len(node.op) == 1:
        left = summands(node.left)
        return left + [(node.op, node.right)]
    if isinstance(node, Neg):
        return [(node.sign, node.operand)]
    return [("+", node)]


def join_sum(parts: list[tuple[str, Node]]) -> Node | None:
    out: Node | None = None
    for sign, n in parts:
        out = (Neg(sign, n) if sign == "-" else n) if out is None else BinOp(sign, out, n)
    return out


# ---- the parser ---------------------------------------------------------------------------------------------
@dataclass
class _Random:
    """A random term while parsing (kept out of Node so it can only be a top-level term)."""

    expr: Node
    group: str
    double_bar: bool
    tok: Token


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks, self.error = _tokens(text)
        self.i = 0
        self.depth = 0  # nesting of parentheses, transformations and signs (MAX_NESTING)

    @contextlib.contextmanager
    def deeper(self, tok: Token) -> Iterator[None]:
        """One level of nesting; beyond MAX_NESTING the formula is refused (a RecursionError otherwise)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise FormulaDepthError(f"refused {tok.text!r} {tok.where()}: parentheses, transformations and signs are "
                               f"nested more than {MAX_NESTING} deep")
        try:
            yield
        finally:
            self.depth -= 1

    # helpers
    @property
    def tok(self) -> Token:
        if self.i >= len(self.toks):
            assert self.error is not None
            raise self.error
        return self.toks[self.i]

    def next(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def at(self, *ops: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in ops

    def fail(self, tok: Token, why: str) -> FormulaError:
        shown = repr(tok.text) if tok.kind != "end" else "the end of the formula"
        return FormulaError(f"refused {shown} {tok.where()}: {why}")

    def expect(self, op: str, why: str) -> Token:
        if not self.at(op):
            if op == ")" and self.tok.kind == "end":
                raise FormulaError("unbalanced parentheses: a '(' is never closed")
            raise self.fail(self.tok, why)
        return self.next()

    # formula
    def formula(self) -> tuple[Node, Node | None, list[_Random]]:
        tildes = [t for t in self.toks if t.kind == "op" and t.text == "~"]
        if not tildes and self.error is None:
            raise FormulaError(f"formula {self.text!r} needs exactly one '~' (response ~ predictors)")
        if self.at("~"):
            raise FormulaError(f"formula {self.text!r} has no response left of '~'")
        lhs = self.arith()
        self.expect("~", "the response is one column or a transformation of one (e.g. correct or log(rt_ms)), then '~'")
        if self.tok.kind == "end":
            raise FormulaError(f"formula {self.text!r} has no predictors right of '~' (write 1 for an intercept only)")
        parts = self.terms(top=True)
        if self.tok.kind != "end":
            if self.at(")"):
                raise FormulaError("unbalanced parentheses: a ')' without its '('")
            if self.at("~"):
                raise self.fail(self.tok, "a formula has one '~' (response ~ predictors); '~' inside a term is R code")
            raise self.fail(self.tok, "expected an operator (+ - * / ^ : %in%) or the end of the formula")
        fixed: list[tuple[str, Node]] = []
        random: list[_Random] = []
        for sign, p in parts:
            if isinstance(p, _Random):
                if sign == "-":
                    raise self.fail(p.tok, "a random term cannot be subtracted")
                random.append(p)
            else:
                fixed.append((sign, p))
        return lhs, join_sum(fixed), random

    def terms(self, top: bool = False) -> list:
        """A sum of products: [(sign, node or random term)]."""
        out: list = []
        sign = "+"
        if self.at("+", "-"):
            sign = self.next().text
        while True:
            p = self.product(top)
            out.append((sign, p))
            if not self.at("+", "-"):
                return out
            sign = self.next().text

    def product(self, top: bool):
        left = self.nested(top)
        while self.at("*", "/"):
            op = self.next()
            right = self.nested(False)
            left = BinOp(op.text, self._fixed(left, op), self._fixed(right, op))
        return left

    def _fixed(self, n, op: Token) -> Node:
        if isinstance(n, _Random):
            raise self.fail(op, "a random term (... | group) is a term of its own: join it with '+'")
        return n

    def nested(self, top: bool):
        left = self.inter(top)
        while self.at("%in%"):
            op = self.next()
            left = BinOp("%in%", self._fixed(left, op), self._fixed(self.inter(False), op))
        return left

    def inter(self, top: bool):
        left = self.power(top)
        while self.at(":"):
            op = self.next()
            left = BinOp(":", self._fixed(left, op), self._fixed(self.power(False), op))
        return left

    def power(self, top: bool):
        base = self.atom(top)
        if self.at("^"):
            op = self.next()
            t = self.next()
            if t.kind != "num" or not is_ascii_digits(t.text) or not 1 <= int(t.text) <= 10:
                raise self.fail(t, "'^' in a formula takes a whole number of interaction orders (e.g. (a + b + c)^2)")
            return BinOp("^", self._fixed(base, op), Num(t.text))
        return base

    def atom(self, top: bool):
        t = self.tok
        if t.kind in ("name", "qname"):
            return self.name_or_call(formula_level=True)
        if t.kind == "num":
            self.next()
            if t.text not in ("0", "1"):
                raise self.fail(t, "a number stands alone in a formula only as 0 or 1 (the intercept); use "
                                   "numbers inside I(), poly() or after '^'")
            return Num(t.text)
        if self.at("("):
            open_ = self.next()
            with self.deeper(open_):
                inner = self.terms()
            if self.at("|", "||"):
                bar = self.next()
                g = self.next()
                if g.kind not in ("name", "qname") or not self.at(")"):
                    if g.kind in ("name", "qname") and self.tok.kind == "end":
                        raise FormulaError("unbalanced parentheses: a '(' is never closed")
                    raise FormulaError(f"random term at character {open_.pos + 1}: the grouping factor after "
                                       f"'{bar.text}' must be one column (refused {g.text or 'the end'!r} {g.where()})")
                if g.kind == "name" and g.text == ".":
                    raise self.fail(g, "'.' (every other column) is not supported: name the columns")
                self.next()
                if not top:
                    raise self.fail(open_, "a random term (... | group) is a term of its own: join it with '+'")
                if any(isinstance(p, _Random) for _, p in inner):
                    raise self.fail(open_, "a random term cannot hold another random term")
                expr = join_sum(inner)
                assert expr is not None
                return _Random(expr, ALIASES.get(g.text, g.text), bar.text == "||", open_)
            self.expect(")", "expected ')' or an operator")
            if any(isinstance(p, _Random) for _, p in inner):
                raise self.fail(open_, "a random term (... | group) is a term of its own, not inside parentheses")
            node = join_sum(inner)
            assert node is not None
            return Paren(node)
        if self.at("|", "||"):
            raise self.fail(t, "'|' belongs inside a random term: (1 | group)")
        if self.at("~"):
            raise self.fail(t, "a formula has one '~' (response ~ predictors); '~' inside a term is R code")
        if t.kind == "end":
            raise self.fail(t, "a term is missing")
        raise self.fail(t, "expected a column name, 0, 1, a transformation or '('")

    def name_or_call(self, formula_level: bool) -> Node:
        t = self.next()
        if self.at("("):
            if t.kind == "qname":
                raise self.fail(t, "a backticked name is a column name, never a function: calling it is R code")
            allowed = TRANSFORMS if formula_level else ARITH_CALLS
            if t.text not in allowed:
                hint = ("; columns of text are factors already "
                        "(sum-coded)" if t.text in ("factor", "as.factor") else "")
                raise self.fail(t, "not a transformation twinlab allows; allowed "
                                   + ("in a formula: " if formula_level else "inside a transformation: ")
                                   + ", ".join(f"{k}()" for k in allowed) + hint)
            self.next()
            with self.deeper(t):
                arg = self.arith_sum()
            args: tuple[Node, ...] = (arg,)
            if t.text == "poly":
                self.expect(",", "poly(x, k) takes a column (or arithmetic of columns) and a degree")
                k = self.next()
                if k.kind != "num" or not is_ascii_digits(k.text) or not 1 <= int(k.text) <= MAX_POLY:
                    raise self.fail(k, f"poly's degree is a whole number from 1 to {MAX_POLY}")
                args = (arg, Num(k.text))
            if self.at(","):
                raise self.fail(self.tok, f"{t.text}() takes {'two arguments' if t.text == 'poly' else 'one argument'}")
            self.expect(")", f"expected ')' closing {t.text}(")
            return Call(t.text, args)
        if t.kind == "name" and t.text == ".":
            raise self.fail(t, "'.' (every other column) is not supported: name the columns")
        return Name(ALIASES.get(t.text, t.text))

    # arithmetic inside transformations (and the response)
    def arith(self) -> Node:
        node = self.arith_sum()
        if not isinstance(node, (Name, Call)):
            raise FormulaError(f"the response {node.r()!r} is not one column or a transformation of one "
                               "(e.g. correct or log(rt_ms))")
        return node

    def arith_sum(self) -> Node:
        left = self.arith_prod()
        while self.at("+", "-"):
            op = self.next().text
            left = BinOp(op, left, self.arith_prod())
        return left

    def arith_prod(self) -> Node:
        left = self.arith_unary()
        while self.at("*", "/"):
            op = self.next().text
            left = BinOp(op, left, self.arith_unary())
        return left

    def arith_unary(self) -> Node:
        if self.at("-", "+"):
            tok = self.next()
            with self.deeper(tok):
                return Neg(tok.text, self.arith_unary())
        return self.arith_pow()

    def arith_pow(self) -> Node:
        base = self.arith_atom()
        if self.at("^"):
            with self.deeper(self.next()):
                return BinOp("^", base, self.arith_unary())
        return base

    def arith_atom(self) -> Node:
        t = self.tok
        if t.kind in ("name", "qname"):
            return self.name_or_call(formula_level=False)
        if t.kind == "num":
            self.next()
            return Num(t.text)
        if self.at("("):
            with self.deeper(self.next()):
                inner = self.arith_sum()
            self.expect(")", "expected ')' or an arithmetic operator (+ - * / ^)")
            return Paren(inner)
        if t.kind == "op" and t.text in (":", "%in%", "|", "||", "~", ","):
            raise self.fail(t, "inside a transformation only arithmetic (+ - * / ^) of columns and numbers")
        raise self.fail(t, "expected a column, a number or '(' inside the transformation")


# ---- the formula ---------------------------------------------------------------------------------------------
@dataclass
class RandomTerm:
    """`(expr | group)` or `(expr || group)`: random effects of `expr` by the grouping column `group`."""

    expr: Node
    group: str
    double_bar: bool = False

    @property
    def lhs(self) -> str:
        return self.expr.r()

    def text(self) -> str:
        return f"({self.lhs} {'||' if self.double_bar else '|'} {quote(self.group)})"

    @property
    def has_slopes(self) -> bool:
        return any(not (isinstance(n, Num) and n.text in ("0", "1")) for _, n in summands(self.expr))


@dataclass
class Formula:
    """`response ~ fixed + (random | group) ...` parsed (aliases resolved): every part a tree."""

    text: str  # as the user wrote it (shown, never given to R)
    lhs: Node
    fixed_tree: Node | None
    random: list[RandomTerm] = field(default_factory=list)

    @property
    def response(self) -> str:
        return self.lhs.r()

    @property
    def response_var(self) -> str:
        return node_names(self.lhs)[0]

    @property
    def fixed(self) -> str:
        return self.fixed_tree.r() if self.fixed_tree is not None else ""

    @property
    def predictors(self) -> list[str]:
        """Columns of the fixed part and the random terms' left sides."""
        out = node_names(self.fixed_tree)
        for r in self.random:
            out += node_names(r.expr)
        return list(dict.fromkeys(out))

    @property
    def variables(self) -> list[str]:
        """Every column the formula reads (response, predictors, grouping factors), in order."""
        out = [self.response_var] + node_names(self.fixed_tree)
        for r in self.random:
            out += node_names(r.expr) + [r.group]
        return list(dict.fromkeys(v for v in out if v))

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(r.group for r in self.random))

    def with_random(self, random: list[RandomTerm]) -> "Formula":
        return Formula(self.text, self.lhs, self.fixed_tree, random)

    def with_response(self, lhs: Node) -> "Formula":
        return Formula(self.text, lhs, self.fixed_tree, self.random)

    def with_fixed(self, fixed: Node | None) -> "Formula":
        return Formula(self.text, self.lhs, fixed, self.random)

    def r_text(self) -> str:
        """The formula R receives: written from the tree, never the user's text."""
        rhs = " + ".join([self.fixed or "1"] + [r.text() for r in self.random])
        return f"{self.response} ~ {rhs}"


def parse(text: str) -> Formula:
    """Parse a formula by twinlab's grammar (module docstring); refuse anything else naming the token."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula is text, not {type(text).__name__}")
    p = _Parser(text)
    lhs, fixed, random = p.formula()
    deepest = max(tree_depth(n) for n in (lhs, fixed, *(r.expr for r in random)))
    if deepest > MAX_TREE_DEPTH:
        raise FormulaDepthError(f"formula {text[:60]!r}...: its terms and operators are chained {deepest} deep; at "
                                "most "
                                f"{MAX_TREE_DEPTH}")
    resp = node_names(lhs)
    if len(resp) != 1:
        raise FormulaError(f"formula {text!r}: the response must be one column (e.g. correct or log(rt_ms))")
    f = Formula(text, lhs, fixed, [RandomTerm(r.expr, r.group, r.double_bar) for r in random])
    grouping = grouping_depth(f.r_text())
    if grouping > MAX_GROUPING:
        raise FormulaDepthError(f"formula {text[:60]!r}: parentheses grouping terms are nested {grouping} deep; at "
                                "most "
                                f"{MAX_GROUPING} (lme4 reads each level twice over: 16 levels take minutes)")
    return f


def grouping_depth(r_text: str) -> int:
    """The deepest nesting of grouping parentheses in a formula's R text: a '(' right after a name is a
    call (I, log, scale, poly) and does not count; backticked names are skipped."""
    depth = deepest = 0
    stack: list[bool] = []  # per open '(': is it grouping?
    quoted, prev = False, ""
    for ch in r_text:
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch == "(":
            grouping = not (prev.isalnum() or prev in "._")
            stack.append(grouping)
            depth += grouping
            deepest = max(deepest, depth)
        elif not quoted and ch == ")" and stack:
            depth -= stack.pop()
        if ch != " ":
            prev = ch
    return deepest


def names_in(expr: str) -> list[str]:
    """Column names of a formula (with '~') or of its right-hand side, read by the grammar."""
    if "~" in expr:
        return parse(expr).variables
    return parse(f"y__ ~ {expr}").variables[1:]


def check_columns(formula: Formula, columns: list[str]) -> None:
    """Every variable of the formula must be a column of the table (the message lists what exists)."""
    missing = [v for v in formula.variables if v not in columns]
    if missing:
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
    order = [lv for lv in (declared or (["true", "false"] if set(present) <= {"true", "false"} else []))
             if lv in present]
    return order + [lv for lv in present if lv not in order]


def _substitute(node: Node | None, rename: dict[str, Node]) -> Node | None:
    """The tree with factor names replaced by their coded columns (a new tree; the input is unchanged)."""
    if node is None:
        return None
    if isinstance(node, Name):
        return rename.get(node.name, node)
    if isinstance(node, Paren):
        return Paren(_substitute(node.inner, rename))  # type: ignore[arg-type]
    if isinstance(node, BinOp):
        return BinOp(node.op, _substitute(node.left, rename), _substitute(node.right, rename))  # type: ignore[arg-type]
    if isinstance(node, Neg):
        return Neg(node.sign, _substitute(node.operand, rename))  # type: ignore[arg-type]
    return node  # Num, Call (factors inside a transformation are refused before)


def sum_code(data: pd.DataFrame, formula: Formula, declared: dict[str, list[str]] | None = None
             ) -> tuple[pd.DataFrame, Formula, list[Coding]]:
    """Replace the formula's factor predictors by sum-coded numeric columns (grouping factors stay text)."""
    declared = declared or {}
    predictors = [v for v in formula.predictors if v != formula.response_var and v not in formula.groups]
    in_calls = {n for tree in [formula.fixed_tree] + [r.expr for r in formula.random] if tree is not None
                for c in walk(tree) if isinstance(c, Call) for n in node_names(c)}
    d = data.copy()
    codings: list[Coding] = []
    rename: dict[str, Node] = {}
    taken = set(d.columns)
    for v in predictors:
        if not is_factor(d[v]):
            continue
        if v in in_calls:
            raise FormulaError(f"--formula: {v!r} is a factor (text or true/false), and a transformation (I(), log(), "
                               "scale(), poly()) needs a numeric column")
        text = d[v].map(lambda x: x if pd.isna(x) else ("true" if x is True else "false" if x is False else str(x)))
        levels = factor_levels(d[v], declared.get(v))
        if len(levels) < 2:
            raise TooFewLevels(v, levels, "factor")
        k = len(levels)
        names = [v] if k == 2 else [f"{v}{j + 1}" for j in range(k - 1)]
        clash = [n for n in names[1:] + ([] if k == 2 else names[:1]) if n in taken and n != v]
        if clash:
            raise FormulaError(f"--formula: factor {v!r}'s coded column {clash[0]!r} is also a column of the table; "
                               "rename one of them")
        cols = {}
        for j, name in enumerate(names):
            codes = {lv: (1 if i == j else -1 if i == k - 1 else 0) for i, lv in enumerate(levels)}
            d[name] = text.map(codes).astype(float)
            cols[name] = codes
        codings.append(Coding(v, levels, cols))
        if k > 2:
            sum_node = join_sum([("+", Name(n)) for n in names])
            assert sum_node is not None
            rename[v] = Paren(sum_node)
    coded = Formula(formula.text, formula.lhs, _substitute(formula.fixed_tree, rename),
                    [RandomTerm(_substitute(r.expr, rename), r.group, r.double_bar) for r in formula.random])
    return d, coded, codings


def simpler_structures(formula: Formula) -> list[tuple[str, Formula]]:
    """The fallback sequence after the maximal random effects: without correlations (`||`), then
    random intercepts only. Each step named; steps that change nothing are skipped."""
    steps: list[tuple[str, Formula]] = []
    if any(r.has_slopes and not r.double_bar for r in formula.random):
        steps.append(("no correlations between random effects (||)",
                      formula.with_random([RandomTerm(r.expr, r.group, r.has_slopes) for r in formula.random])))
    if any(r.has_slopes for r in formula.random):
        steps.append(("random intercepts only", formula.with_random([RandomTerm(Num("1"), g) for g in formula.groups])))
    return steps


def is_rt(name: str) -> bool:
    """A response time column (fitted on a log scale unless the formula says otherwise)."""
    return bool(RT_PATTERN.search(name))
