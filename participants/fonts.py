"""The font every PsychoPy text of a session is drawn in, chosen by the spec's language.

Why: PsychoPy's TextStim draws with pyglet, which takes every glyph from the one font it loaded and
has no fallback, so Chinese in the default sans font comes out as empty boxes. A spec in Chinese,
Japanese or Korean gets the matching Noto Sans CJK face (Debian's `fonts-noto-cjk`, installed by
scripts/setup.sh), which also holds Latin letters and digits; any other language keeps PsychoPy's
default (no `font` argument at all, so nothing changes for it). The browser picks fonts per glyph and
needs no such choice (the page says lang="zh", so Chromium takes the Simplified Chinese face).
"""
from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from typing import Any

CJK_FONTS = {"zh": "Noto Sans CJK SC", "zh-tw": "Noto Sans CJK TC", "zh-hk": "Noto Sans CJK TC",
             "zh-hant": "Noto Sans CJK TC", "ja": "Noto Sans CJK JP", "ko": "Noto Sans CJK KR"}
ATTR = "twinlab_font"  # where the session's font is kept on the window


def text_font(language: str) -> str:
    """The font family for `language` (a BCP 47 tag), or "" for PsychoPy's default."""
    tag = language.lower()
    parts = tag.split("-")
    for key in (tag, "-".join(parts[:2]), parts[0]):
        if key in CJK_FONTS:
            return CJK_FONTS[key]
    return ""


def set_window_font(win: Any, language: str) -> str:
    """Keep the session's font on its window (every text stimulus of the session reads it)."""
    font = text_font(language)
    try:
        setattr(win, ATTR, font)
    except AttributeError:  # a stand-in window that takes no attributes: the default font
        pass
    return font


def font_of(win: Any) -> dict[str, str]:
    """`font=` for a TextStim on `win`: {} unless the session's language needs a font of its own."""
    font = getattr(win, ATTR, "")
    return {"font": font} if font else {}


@lru_cache(maxsize=8)
def missing_font(language: str) -> str | None:
    """A warning when the language's font is not installed (its characters would show as boxes), else None."""
    font = text_font(language)
    if not font or shutil.which("fc-list") is None:
        return None
    try:
        found = subprocess.run(["fc-list", font, "family"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    if found.strip():
        return None
    return (f"the font {font!r} for language {language!r} is not installed: PsychoPy would draw its characters "
            "as boxes (install Debian's fonts-noto-cjk; scripts/setup.sh does)")


CJK_ADVANCE = 1.0  # a CJK character's width in letter heights (measured: 0.93 for Noto Sans CJK in PsychoPy)
OTHER_ADVANCE = 0.6  # any other character's (Latin letters, digits, spaces: about half as wide)
NO_LINE_START = set("，。、：；！？）」』》〉…,.:;!?)")  # punctuation that never begins a line (kinsoku)


def _cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0xFE30 <= o <= 0xFE4F
            or 0xFF00 <= o <= 0xFFEF or 0x20000 <= o <= 0x2FA1F)


def breakable(win: Any, text: str, width: float, height: float) -> str:
    """`text` with line breaks where a line of `height`-high letters would pass `width` (same units),
    in a session with a CJK font; unchanged otherwise.

    Why: pyglet breaks lines only at spaces, and Chinese has none, so a long instruction or sentence ran
    off the screen as one line (a zero-width space is drawn as a box by these fonts). Lines are broken
    between two CJK characters or at a space, by an estimate of each character's width that errs wide;
    only what is drawn changes (the trial table records the materials, not the stimulus text)."""
    if not getattr(win, ATTR, "") or height <= 0 or not any(_cjk(c) for c in text):
        return text
    room = width / height
    lines = []
    for para in text.split("\n"):
        line, used = "", 0.0
        for _k, ch in enumerate(para):
            w = CJK_ADVANCE if _cjk(ch) else OTHER_ADVANCE
            can_break = bool(line) and ch not in NO_LINE_START and (
                ch == " " or (_cjk(ch) and _cjk(line[-1])) or _cjk(ch) != _cjk(line[-1]))
            if used + w > room and can_break:
                lines.append(line.rstrip())
                line, used = ("", 0.0) if ch == " " else (ch, w)
                continue
            line, used = line + ch, used + w
        lines.append(line)
    return "\n".join(lines)
