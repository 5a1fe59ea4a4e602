"""Results files written the way Ibex writes them: a Python 3 port of the code that makes a results file.

Ported from github.com/addrummond/ibex (BSD licence, Copyright (c) Alex Drummond), commit 4b2a056:
- other_includes/main.js `finishedCallback`/`namesToIndices`: each results line of a controller gets the
  preamble (controller name, item number, element number, type, group: the group's first value, NULL for an
  item without one) and its column names become indices into one names array;
- www/server.py `rearrange` (the grouping of lines whose column names repeat with a period 1..5: "groups of K"),
  `intersperse_comments`, `simple_intersperse_comments`, `ensure_period`, `to_csv` and the "# Results on" header;
- js_includes/*.js: the results lines each controller passes to finishedCallback (DashedSentence's
  processSprResults, Question's keydown handler, FlashSentence, Form, AcceptabilityJudgment's VBox of
  FlashSentence + Question), `csv_url_encode` of util.js (a comma or control character as %XX).
PennController's lines (PCIbex Farm's server, same layout, newer first column names) are made by `penn_line`.
The values (words, times, answers) are the caller's; the layout is the tools'.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

CLASSIC_PREAMBLE = ["Controller name", "Item number", "Element number", "Type", "Group"]
CLASSIC_FIRST = ["Time results were received", "MD5 hash of participant's IP address"]
PENN_PREAMBLE = ["Controller name", "Order number of item", "Inner element number", "Label", "Latin.Square.Group"]
PENN_FIRST = ["Results reception time", "MD5 hash of participant's IP address"]
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"


def csv_url_encode(s: Any) -> str:
    """util.js custom_url_encode(s, ","): a comma or a control character as %XX."""
    s = str(s)
    return "".join(f"%{ord(c):02X}" if ord(c) < 32 or ord(c) == 127 or c == "," else c for c in s)


@dataclass
class Element:
    controller: str
    item: int
    element: int
    type: str
    group: Optional[Any] = None   # a Latin-square group value (None: NULL)


@dataclass
class Submission:
    """One participant's run: main.js's allResults and columnNamesArray."""
    preamble: list[str] = field(default_factory=lambda: list(CLASSIC_PREAMBLE))
    names: list[str] = field(default_factory=list)
    lines: list[list[list[Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names = list(self.preamble)

    def index(self, name: str) -> int:
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)

    def finished(self, el: Element, results: list[list[tuple[str, Any]]]) -> None:
        """main.js finishedCallback(resultsLines)."""
        group = "NULL" if el.group is None else el.group
        for line in results:
            pre = [[0, el.controller], [1, el.item], [2, el.element], [3, el.type], [4, group]]
            self.lines.append(pre + [[self.index(n), v] for n, v in line])


def group_list(seq: list, n: int) -> list[list]:
    """server.py group_list."""
    out, cur, count = [], [], 0
    for x in seq:
        if count >= n:
            out.append(cur)
            cur, count = [x], 1
        else:
            cur.append(x)
            count += 1
    out.append(cur)
    return out


def rearrange(names: list[str], lines: list, thetime: float, md5: str) -> tuple[list, list]:
    """server.py rearrange: the rows (time, MD5, values) and where each run of repeating column names begins."""
    new_results, column_names = [], []
    main_index = 0
    while main_index < len(lines):
        old_main_index = main_index
        for phase in range(1, 6):
            next_comment_index = main_index
            subs = group_list(lines[main_index:], phase)
            rs, old_names = [], None
            for sub in subs:
                sub_names = [[names[x[0]] for x in line] for line in sub]
                if not old_names:
                    old_names = sub_names
                if old_names != sub_names:
                    break
                rs.extend([[int(round(thetime)), md5] + [x[1] for x in line] for line in sub])
                main_index += phase
            if len(rs) == 1:
                main_index -= phase
            elif len(rs) > 1:
                column_names.append([next_comment_index, old_names])
                new_results.extend(rs)
                break
            if main_index >= len(lines):
                break
        if old_main_index == main_index:
            for i, line in enumerate(lines[main_index:]):
                new_results.append([int(round(thetime)), md5] + [x[1] for x in line])
                column_names.append([main_index + i, [[names[x[0]] for x in line]]])
            break
    return new_results, column_names


def ensure_period(s: str) -> str:
    return s if s.endswith((".", "?", "!")) else s + "."


def intersperse_comments(main: list, name_specs: list, first: list[str]) -> list:
    newr = []
    for i, line in enumerate(main):
        for idx, spec in name_specs:
            if idx == i:
                if len(spec) == 1:
                    newr.append(["# Columns below this comment are as follows:"])
                    newr += [[f"# {n}. {ensure_period(c)}"] for n, c in enumerate(first + spec[0], 1)]
                else:
                    newr.append([f"# The lines below this comment are in groups of {len(spec)}."])
                    newr.append(["# The formats of the lines in each of these groups are as follows:"])
                    newr.append(["#"])
                    for k, names in enumerate(spec, 1):
                        newr.append([f"# Line {k}:"])
                        newr += [[f"#     Col. {j}: {ensure_period(c)}"] for j, c in enumerate(first + names, 1)]
                break
        newr.append(line)
    return newr


def simple_intersperse_comments(main: list, name_specs: list, first: list[str]) -> list:
    newr = [["#"], ["# IMPORTANT NOTE: As of ibex 0.3-beta15, the default format of the"],
            ["# comments in this file has changed, so that a comment is inserted"],
            ["# for each individual line giving the names of the columns (except"],
            ["# the first seven, which are always the same; see manual). The format"],
            ["# of the results themselves has not changed. You can revert to the"],
            ["# old-style comments by setting the 'SIMPLE_RESULTS_FILE_COMMENTS'"],
            ["# configuration variable to False."], ["#"]]
    k, start = 0, 0
    for i, line in enumerate(main):
        if k < len(name_specs) - 1 and name_specs[k + 1][0] == i:
            start, k = i, k + 1
        ns = name_specs[k][1]
        cns = ns[(i - start) % len(ns)]
        newr.append(["# ...First 7... " + " -- ".join(f"[{j + 8}] {s}" for j, s in enumerate(cns[5:]))])
        newr.append(line)
    return newr


def to_csv(lines: list) -> str:
    return "".join(",".join(str(x) for x in line) + "\n" for line in lines)


def results_text(sub: Submission, thetime: float, md5: str, counter: int, simple: bool = False,
                 first: Optional[list[str]] = None) -> str:
    """What server.py appends to the results file for one submission."""
    rows, specs = rearrange(sub.names, sub.lines, thetime, md5)
    first = first or (PENN_FIRST if sub.preamble == PENN_PREAMBLE else CLASSIC_FIRST)
    body = (simple_intersperse_comments if simple else intersperse_comments)(rows, specs, first)
    when = time.strftime("%A %B %d %Y %H:%M:%S UTC", time.gmtime(thetime))
    header = f"#\n# Results on {when}.\n# USER AGENT: {USER_AGENT}\n# Design number was non-random = {counter}\n#\n"
    return header + to_csv(body)


# --- the classic controllers' results lines (js_includes/*.js) ---

def dashed_sentence(words: list[str], rts: list[float], sentence: Optional[str] = None,
                    in_place: bool = False) -> list[list[tuple[str, Any]]]:
    """DashedSentence, self-paced reading: one line per word (or chunk, when `s` is a list)."""
    desc = csv_url_encode(sentence if sentence is not None else " ".join(words))
    return [[("Word number", i + 1), ("Word", csv_url_encode(w)), ("Reading time", round(rt * 10) / 10),
             ("Newline?", "false" if in_place else 0), ("Sentence (or sentence MD5)", desc)]
            for i, (w, rt) in enumerate(zip(words, rts, strict=True))]


def flash_sentence(sentence: str) -> list[list[tuple[str, Any]]]:
    """FlashSentence (and DashedSentence in speeded-acceptability mode): the sentence only."""
    return [[("Sentence (or sentence MD5)", csv_url_encode(sentence))]]


def question(q: Optional[str], answer: Optional[str], correct: Optional[bool], rt: float) -> list:
    """Question: the answer, its own scoring (1/0; NULL without hasCorrect) and the time taken."""
    return [[("Question (NULL if none).", csv_url_encode(q) if q else "NULL"),
             ("Answer", csv_url_encode(answer) if answer is not None else "NULL"),
             ("Whether or not answer was correct (NULL if N/A)", "NULL" if correct is None else int(correct)),
             ("Time taken to answer.", rt)]]


def form(fields: list[tuple[str, str]], rt: float) -> list:
    """Form: one line per field, then the reaction time."""
    return [[("Field name", csv_url_encode(n)), ("Field value", csv_url_encode(v))] for n, v in fields] + \
        [[("Field name", "_REACTION_TIME_"), ("Field value", rt)]]


def maze(words: list[str], foils: list[str], sides: list[int], first_error: Optional[int],
         rts: list[float], sentence: str) -> list:
    """Boyce & Witzel's Maze controller (end mode): one line per word, no time after the first error."""
    out = []
    for i, (w, f, s) in enumerate(zip(words, foils, sides, strict=True)):
        ok = first_error is None or i < first_error
        shown = first_error is None or i <= first_error
        out.append([("Word number", i), ("Word", csv_url_encode(w)), ("Alternative", csv_url_encode(f)),
                    ("Word on (0=left, 1=right)", s), ("Correct", "yes" if ok else "no"),
                    ("Reading time", rts[i] if shown else "None"), ("Sentence", csv_url_encode(sentence))])
    return out


def penn_line(element_type: str, name: str, parameter: str, value: Any, event_time: Any,
              extra: Optional[list[tuple[str, Any]]] = None, comments: str = "NULL") -> list[tuple[str, Any]]:
    """One PennController log line: the element's event, the trial's logged columns, then Comments."""
    return [("PennElementType", element_type), ("PennElementName", name), ("Parameter", parameter),
            ("Value", csv_url_encode(value)), ("EventTime", event_time)] + list(extra or []) + \
        [("Comments", comments)]
