"""jsPsych 6.0-6.2's key codes as key names: its keyboard plugins store the key pressed as `key_press`, a
JavaScript keyCode (70 for F); 6.3 and later store the key itself (`response`: "f").

The names are jsPsych 6's own (`jsPsych.pluginAPI.convertKeyCodeToKeyCharacter`, its `keylookup` table: the first
name of each code), so a study's `correct_response: "f"` and a pressed 70 mean the same key.
"""
from __future__ import annotations

from typing import Optional

from stimuli.input_rules import is_ascii_digits

# jsPsych 6.0.4 jspsych.js `keylookup`, code -> its first name there
KEY_NAMES: dict[int, str] = {
    8: "backspace", 9: "tab", 13: "enter", 16: "shift", 17: "ctrl", 18: "alt", 19: "pause", 20: "capslock", 27: "esc",
    32: "space", 33: "pageup", 34: "pagedown", 35: "end", 36: "home", 37: "leftarrow", 38: "uparrow",
    39: "rightarrow", 40: "downarrow", 45: "insert", 46: "delete",
    **{48 + d: str(d) for d in range(10)}, **{65 + i: chr(ord("a") + i) for i in range(26)},
    **{96 + d: f"{d}numpad" for d in range(10)},
    106: "multiply", 107: "plus", 109: "minus", 110: "decimal", 111: "divide",
    **{112 + i: f"f{i + 1}" for i in range(12)},
    187: "=", 188: ",", 190: ".", 191: "/", 192: "`", 219: "[", 220: "\\", 221: "]",
}
KEY_CODE_FIELD = "key_press"   # the field jsPsych 6.0-6.2 stores a keyCode in


def key_name(value: Optional[str]) -> Optional[str]:
    """A stored keyCode ("70") as jsPsych 6 names the key ("f"); any other value (a key name, null) as it is."""
    if value is None:
        return None
    text = value.strip()
    if is_ascii_digits(text) and int(text) in KEY_NAMES:
        return KEY_NAMES[int(text)]
    return value
