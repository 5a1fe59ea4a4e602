"""The key and colour names PsychoPy accepts, so a spec is checked without importing PsychoPy.

Why a copy: importing `psychopy.colors` or `psychopy.hardware.keyboard` pulls in pyglet and
psychtoolbox (seconds, and a display library in a model-only process). The lists are PsychoPy's
own (psychopy 2026.2.5); tests/experiments/test_validation.py checks them against the
installed PsychoPy, so a PsychoPy upgrade that changes them fails a test instead of a session.
"""
from __future__ import annotations

import re

# names `psychopy.hardware.keyboard` reports on every platform (the keys of keyNamesWin,
# keyNamesMac and keyNamesLinux in common): a key outside this set has no keycode somewhere
KEY_NAMES: frozenset[str] = frozenset({
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k',
    'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'apostrophe', 'backslash',
    'backspace', 'bracketleft', 'bracketright', 'comma', 'delete', 'down', 'end', 'equal', 'escape', 'f1',
    'f10', 'f11', 'f12', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'home', 'lctrl', 'left', 'lshift',
    'minus', 'num_0', 'num_1', 'num_2', 'num_3', 'num_4', 'num_5', 'num_6', 'num_7', 'num_8', 'num_9',
    'num_add', 'num_divide', 'num_multiply', 'num_subtract', 'numlock', 'pagedown', 'pageup', 'period',
    'return', 'right', 'semicolon', 'slash', 'space', 'tab', 'up',
})

# `psychopy.colors.colorNames` without 'none' and 'transparent' (invisible feedback is a mistake)
COLOR_NAMES: frozenset[str] = frozenset({
    'aliceblue', 'antiquewhite', 'aqua', 'aquamarine', 'azure', 'beige', 'bisque', 'black',
    'blanchedalmond', 'blue', 'blueviolet', 'brown', 'burlywood', 'cadetblue', 'chartreuse', 'chestnut',
    'chocolate', 'coral', 'cornflowerblue', 'cornsilk', 'crimson', 'cyan', 'darkblue', 'darkcyan',
    'darkgoldenrod', 'darkgray', 'darkgreen', 'darkgrey', 'darkkhaki', 'darkmagenta', 'darkolivegreen',
    'darkorange', 'darkorchid', 'darkred', 'darksalmon', 'darkseagreen', 'darkslateblue', 'darkslategray',
    'darkslategrey', 'darkturquoise', 'darkviolet', 'deeppink', 'deepskyblue', 'dimgray', 'dimgrey',
    'dodgerblue', 'firebrick', 'floralwhite', 'forestgreen', 'fuchsia', 'gainsboro', 'ghostwhite', 'gold',
    'goldenrod', 'gray', 'grey', 'green', 'greenyellow', 'honeydew', 'hotpink', 'indigo', 'ivory', 'khaki',
    'lavender', 'lavenderblush', 'lawngreen', 'lemonchiffon', 'lightblue', 'lightcoral', 'lightcyan',
    'lightgoldenrodyellow', 'lightgray', 'lightgreen', 'lightgrey', 'lightpink', 'lightsalmon',
    'lightseagreen', 'lightskyblue', 'lightslategray', 'lightslategrey', 'lightsteelblue', 'lightyellow',
    'lime', 'limegreen', 'linen', 'magenta', 'maroon', 'mediumaquamarine', 'mediumblue', 'mediumorchid',
    'mediumpurple', 'mediumseagreen', 'mediumslateblue', 'mediumspringgreen', 'mediumturquoise',
    'mediumvioletred', 'midnightblue', 'mintcream', 'mistyrose', 'moccasin', 'navajowhite', 'navy',
    'oldlace', 'olive', 'olivedrab', 'orange', 'orangered', 'orchid', 'palegoldenrod', 'palegreen',
    'paleturquoise', 'palevioletred', 'papayawhip', 'peachpuff', 'peru', 'pink', 'plum', 'powderblue',
    'purple', 'red', 'rosybrown', 'royalblue', 'saddlebrown', 'salmon', 'sandybrown', 'seagreen',
    'seashell', 'sienna', 'silver', 'skyblue', 'slateblue', 'slategray', 'slategrey', 'snow', 'springgreen',
    'steelblue', 'tan', 'teal', 'thistle', 'tomato', 'turquoise', 'violet', 'wheat', 'white', 'whitesmoke',
    'yellow', 'yellowgreen',
})
INVISIBLE_COLORS = frozenset({"none", "transparent"})
_HEX = re.compile(r"^#[0-9A-Fa-f]{6}$")  # PsychoPy's hex colour space: #rrggbb only


def check_key(name: str) -> str | None:
    """None when PsychoPy knows the key on every platform, else why not."""
    if name in KEY_NAMES:
        return None
    hint = f" (PsychoPy names it {name.lower()!r})" if name.lower() in KEY_NAMES else ""
    return f"{name!r} is not a PsychoPy key name on every platform{hint}; e.g. space, return, f, j, left, num_1"


def check_color(value: str) -> str | None:
    """None when PsychoPy draws the colour (a colour name, any case, or #rrggbb), else why not."""
    low = value.strip().lower()
    if low in COLOR_NAMES or _HEX.match(value.strip()):
        return None
    if low in INVISIBLE_COLORS or not low:
        return f"{value!r} would make the text invisible; use a colour name such as green or #00aa00"
    return f"{value!r} is not a colour PsychoPy knows; use a colour name (green, darkred, ...) or #rrggbb"
