"""The participant dialog (PsychoPy's DlgFromDict): id, session and the spec's participant fields."""
from __future__ import annotations

import ctypes.util
import os
import sys
from typing import Any

from experiments.spec import Experiment

# fields with a fixed set of answers get a drop-down (the first entry is the default)
CHOICES: dict[str, list[str]] = {
    "handedness": ["", "right", "left", "ambidextrous"],
}


# Qt's xcb platform plugin (PyQt6 >= 6.5) needs these; without them Qt aborts the process
QT_XCB_LIBS = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4", "xcb-keysyms": "libxcb-keysyms1"}


class DialogUnavailable(RuntimeError):
    """The dialog cannot open here (no display, or Qt's system libraries are missing)."""


def check_dialog_possible() -> None:
    """Fail with a clear message *before* Qt would abort the whole process."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM", "xcb") != "xcb":
        return
    hint = "or give --participant ID (and --info FIELD=VALUE for the participant fields)"
    if not os.environ.get("DISPLAY"):
        raise DialogUnavailable(f"the participant dialog needs a display (DISPLAY is not set); {hint}")
    missing = [pkg for lib, pkg in QT_XCB_LIBS.items() if ctypes.util.find_library(lib) is None]
    if missing:
        raise DialogUnavailable(
            f"the participant dialog (Qt) needs system libraries that are missing: apt-get install "
            f"{' '.join(missing)}; {hint}")


def dialog_fields(exp: Experiment, participant: str = "", session: int = 1) -> dict[str, Any]:
    info: dict[str, Any] = {"participant": participant, "session": session}
    for f in exp.participant_fields:
        info[f] = list(CHOICES[f]) if f in CHOICES else ""
    return info


def ask_participant_info(exp: Experiment, participant: str = "", session: int = 1) -> dict[str, Any] | None:
    """Show the dialog; returns the answers, or None when the experimenter cancels."""
    check_dialog_possible()
    from psychopy import gui  # PsychoPy loads only when a window opens

    info = dialog_fields(exp, participant, session)
    order = list(info)
    dlg = gui.DlgFromDict(info, title=f"twinlab: {exp.name}", order=order, sortKeys=False,
                          tip={"participant": "letters and digits only (it becomes part of the file name)"})
    if not dlg.OK:
        return None
    return {k: (v[0] if isinstance(v, list) and v else v) for k, v in info.items()}
