"""The participant dialog (PsychoPy's DlgFromDict): id, session and the spec's participant fields."""
from __future__ import annotations

from typing import Any

from experiments.spec import Experiment

# fields with a fixed set of answers get a drop-down (the first entry is the default)
CHOICES: dict[str, list[str]] = {
    "handedness": ["", "right", "left", "ambidextrous"],
}


def dialog_fields(exp: Experiment, participant: str = "", session: int = 1) -> dict[str, Any]:
    info: dict[str, Any] = {"participant": participant, "session": session}
    for f in exp.participant_fields:
        info[f] = list(CHOICES[f]) if f in CHOICES else ""
    return info


def ask_participant_info(exp: Experiment, participant: str = "", session: int = 1) -> dict[str, Any] | None:
    """Show the dialog; returns the answers, or None when the experimenter cancels."""
    from psychopy import gui

    info = dialog_fields(exp, participant, session)
    order = list(info)
    dlg = gui.DlgFromDict(info, title=f"twinlab: {exp.name}", order=order, sortKeys=False,
                          tip={"participant": "letters and digits only (it becomes part of the file name)"})
    if not dlg.OK:
        return None
    return {k: (v[0] if isinstance(v, list) and v else v) for k, v in info.items()}
