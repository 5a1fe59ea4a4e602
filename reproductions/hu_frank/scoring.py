"""The paper's scoring of each method, as the authors' evaluation code scores it.

Production
    digit matrices   the generated digits up to the first "]" form the answer set (a character that is neither
                     a digit, a space nor "]" makes it invalid); correct when it equals the correct answer's
                     digits (sorted first for the permutation-invariant problem types)
    CRT              the response is cut at the first newline or period (clean_response), written as money when
                     it is a number, and matched against every answer option (last match wins, as the authors'
                     naive label); coded correct / intuitive / other. Strict: that code is "correct". Lenient:
                     the correct answer appears anywhere in the first non-empty line, whatever else does
Forced choice
    digit matrices   argmax of the summed log-probability of the 8 choices (no separator)
    CRT              mean per-token log-probability of the correct answer > that of the intuitive one
                     (" " before the answer)
    LAMBADA          log P(final word) summed over its tokens after the prefix (direct) or after prompt (1) (meta)
    grammaticality   direct: log P(good sentence) > log P(bad sentence) (whole sentences);
                     meta: log P("1") vs log P("2") after prompt (2) in both orders (good first, bad first)
"""
from __future__ import annotations

import re

import numpy as np

from stimuli.input_rules import is_ascii_digits

CODE = {"correct": "correct", "correct_alt": "correct", "intuitive": "intuitive", "intuitive_alt": "intuitive"}


def digit_answer_set(generated: str) -> tuple[list[int], bool]:
    """(the digits before the first "]", valid) as the authors parse a generated digit-matrix answer."""
    digits: list[int] = []
    for c in generated:
        if c == " ":
            continue
        if is_ascii_digits(c):  # the authors' isdigit(); int('²') would raise
            digits.append(int(c))
        elif c == "]":
            break
        else:
            return digits, False
    return digits, True


def digit_correct(generated: str, answer: list[int], perm_invariant: bool) -> bool:
    pred, valid = digit_answer_set(generated)
    if not valid or len(pred) != len(answer):
        return False
    if perm_invariant:
        return sorted(pred) == sorted(answer)
    return pred == list(answer)


def clean_crt(response: str) -> str:
    """The authors' clean_response: up to the first newline; then up to the first period (kept)."""
    if "\n" in response:
        p = response.split("\n")[0]
        if "." in response:
            p = p.split(".")[0] + "."
    elif "." in response:
        p = response.split(".")[0] + "."
    else:
        p = response
    return p.strip()


def _money_or_text(text: str) -> str:
    try:
        s = text.strip()
        return "${:,.2f}".format(float(s[1:] if s.startswith("$") else s))
    except ValueError:
        return text


def _matches(response: str, answer: str, condition: str) -> bool:
    if condition.startswith("crt1"):
        found = re.findall(r"\$\d+(?:\.\d+)?", response)
        if answer in found:
            return True
        return answer.endswith(".00") and answer.replace(".00", "") in found
    return answer in response


def crt_label(raw: str, options: dict[str, str], condition: str) -> tuple[str, str]:
    """(the matching option's label or "", the cleaned response): the authors' naive label."""
    cleaned = _money_or_text(clean_crt(raw))
    label = ""
    for lab, text in options.items():
        if _matches(cleaned, text, condition):
            label = lab
    return label, cleaned


def crt_code(label: str) -> str:
    """correct / intuitive / other."""
    return CODE.get(label, "other")


def crt_lenient(raw: str, options: dict[str, str], condition: str) -> bool:
    """The correct answer (or its ".00"-less form) anywhere in the first non-empty line of the raw generation."""
    first = raw.strip().split("\n")[0]
    return any(_matches(first, options[k], condition) for k in ("correct", "correct_alt") if k in options)


def argmax_choice(logprobs: list[float]) -> int:
    return int(np.argmax(np.asarray(logprobs, float)))
