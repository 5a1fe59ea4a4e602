"""In PsychoPy a long panel label ("UNGRAMMATICAL") ran over its answer box. Drawn here in a real
window (private Xvfb): every dark pixel of a label lies inside its box, both labels share one height, and a
short label keeps the design's height."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.spec import bundled_spec_path

try:  # shared helpers and fixtures (the repository root, or tests/, is on sys.path)
    from tests.participants.test_participants_gui import ROOT, env_for, xdisplay  # noqa: F401
except ModuleNotFoundError:
    from test_participants_gui import ROOT, env_for, xdisplay  # noqa: F401

pytestmark = [pytest.mark.gui, pytest.mark.slow]

SCRIPT = r'''
import json, sys
import numpy as np
from psychopy import visual
from experiments.spec import load_spec
from experiments.screen_texts import screen_texts
from participants.screens import PANEL_BOX, PANEL_X, PanelScreen, WORD_HEIGHT, text_width
exp = load_spec(sys.argv[1])
win = visual.Window((1024, 768), units="height", color=(0.75, 0.75, 0.75), fullscr=False, allowGUI=False)
panel = PanelScreen(win, exp, screen_texts(exp))
panel.draw()
win.flip()  # the panel was drawn into the back buffer, now the front: read it back
panel.draw()
im = np.asarray(win.getMovieFrame(buffer="back")).astype(int)
win.close()
H, W = im.shape[:2]
row = im[H // 2]  # the labels' middle line
dark = np.where(row.sum(axis=1) < 150)[0].tolist()  # text and the boxes' borders
out = {"W": W, "H": H, "dark": dark,
       "heights": [l.height for l in panel.labels.values()],
       "widths": [text_width(win, l) for l in panel.labels.values()],
       "box_px": [[round((W / 2 + (x - PANEL_BOX[0] / 2) * H)), round((W / 2 + (x + PANEL_BOX[0] / 2) * H))]
                  for x in (-PANEL_X, PANEL_X)], "design_height": WORD_HEIGHT * 0.7}
print("RESULT" + json.dumps(out))
'''


def _draw(display: str, tmp_path: Path, labels: dict[str, str]) -> dict:
    data = yaml.safe_load(bundled_spec_path("lakretz2021_replication").read_text())
    data["task"]["panel"]["labels"] = labels
    spec = tmp_path / "panel.yaml"
    spec.write_text(yaml.safe_dump(data))
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(spec)], env=env_for(display), cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, r.stdout[-2000:] + r.stderr[-3000:]
    return json.loads(line[0][6:])


def test_a_long_panel_label_is_shrunk_into_its_box(xdisplay, tmp_path):
    got = _draw(xdisplay, tmp_path, {"violation": "UNGRAMMATICAL", "no_violation": "GRAMMATICAL"})
    (l0, r0), (l1, r1) = got["box_px"]
    # every dark pixel on the labels' line is a box border (3 px) or inside a box: none between or beyond
    outside = [x for x in got["dark"] if not (l0 - 3 <= x <= r0 + 3 or l1 - 3 <= x <= r1 + 3)]
    assert outside == [], (outside[:10], got["box_px"])
    inner = [x for x in got["dark"] if l0 + 4 <= x <= r0 - 4]
    margin = 0.03 * (r0 - l0)  # the label itself, clear of the border on both sides
    assert inner and min(inner) > l0 + margin and max(inner) < r0 - margin, (min(inner) - l0, r0 - max(inner))
    assert got["heights"][0] == got["heights"][1] < got["design_height"]
    assert max(got["widths"]) <= 0.5 * 0.9 + 1e-6


def test_short_labels_keep_the_designs_height(xdisplay, tmp_path):
    got = _draw(xdisplay, tmp_path, {"violation": "NO", "no_violation": "YES"})
    assert got["heights"] == [got["design_height"]] * 2
