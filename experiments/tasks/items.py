"""Every item checked against its task before any work starts (what `validate`, `plan` and every runner
run when a design file is read): the kind's materials, its own item check (an answer among the labels
or options, regions that split the sentence, a target within max_chars, ...) and the keys the human
runners need for the largest item (enough keys, none shared, never the quit key)."""
from __future__ import annotations

from typing import Any, Iterable

from experiments.tasks.base import TaskError, get_task
from experiments.tasks.keys import KeySettingError, check_keys
from stimuli.visible_text import lookalike_problem, visible_key


def given_settings(task: Any) -> dict[str, Any]:
    """The `task:` fields of the kind's settings the spec itself gave."""
    return task.given_settings()


# the texts of one item that must read differently: its options, its question's options, a minimal pair
LOOKALIKE_SETS = (("options", "options:"), ("question_options", "question_options:"))


def lookalike_materials(mat: dict[str, Any], where: str) -> None:
    """Two options (or a sentence and its pair_sentence) that differ only invisibly -- a zero-width space, a
    full-width letter, a trailing space -- are no choice and no minimal pair: TaskError naming both
    (stimuli/visible_text.py)."""

    for key, what in LOOKALIKE_SETS:
        problem = lookalike_problem([str(o) for o in mat.get(key) or ()], what)
        if problem:
            raise TaskError(f"{where}: {problem}")
    pair = [mat.get("sentence"), mat.get("pair_sentence")]
    if all(isinstance(p, str) and p for p in pair) and visible_key(pair[0]) == visible_key(pair[1]):
        problem = lookalike_problem(pair, "sentence and "
                                          "pair_sentence:") or "sentence and pair_sentence are the same text"
        raise TaskError(f"{where}: {problem}; a minimal pair must differ in what is read")


def check_items(task: Any, rows: Iterable[tuple[int, dict[str, Any]]], path: str) -> None:
    """Refuse (TaskError naming the file, line and field) an item the spec's task cannot present or score.
    `task`: the spec's Task; `rows`: (line, materials) of the design file."""
    kind = get_task(task.kind)
    settings = task.settings()
    n_opt, n_q = 2, 0
    bad: dict[str, list[int]] = {}  # problem -> the lines that have it
    for line, mat in rows:
        where = f"{path}: line {line}"
        try:
            kind.check_materials(mat, where)
            lookalike_materials(mat, where)
            if kind.check_item is not None:
                kind.check_item(mat, settings, where)
        except TaskError as exc:
            text = str(exc)
            bad.setdefault(text[len(where) + 2:] if text.startswith(where + ": ") else text, []).append(line)
            continue
        n_opt = max(n_opt, len(mat.get("options") or ()))
        n_q = max(n_q, len(mat.get("question_options") or ()))
    if bad:
        raise TaskError(bad_items_message(path, bad))
    try:
        check_keys(task.kind, settings, given_settings(task), task.quit_key, n_options=n_opt,
                   n_question_options=n_q, continue_key=task.response_key)
    except KeySettingError as exc:
        raise TaskError(f"{path}: {exc}") from None


MAX_PROBLEMS = 6  # distinct problems a refusal lists (each with its lines)


def bad_items_message(path: str, bad: dict[str, list[int]]) -> str:
    """One refusal naming every bad line, grouped by problem ('FILE: line 3: ...' for one line)."""
    parts = [f"line {lines[0]}: {problem}" if len(lines) == 1 else f"line(s) {line_list(lines, 20)}: {problem}"
             for problem, lines in list(bad.items())[:MAX_PROBLEMS]]
    more = len(bad) - MAX_PROBLEMS
    rest = sorted(n for _, lines in list(bad.items())[MAX_PROBLEMS:] for n in lines)
    tail = f"; {more} more problem(s) on line(s) {line_list(rest, 20)}" if more > 0 else ""
    return f"{path}: " + "; ".join(parts) + tail


def line_list(numbers: list[int], limit: int = 8) -> str:
    """Line numbers as a refusal names them: the first `limit`, then how many more."""
    return ", ".join(map(str, numbers[:limit])) + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")
