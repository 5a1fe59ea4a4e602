"""What the participant sees: the stimuli of a session, built once, and screenshots of them.

Units are 'height' (1.0 = window height), so the layout is the same on any resolution. Word
stimuli are pre-built before a trial's fixation: changing a TextStim's text re-renders it, which
must not happen between two flips that time a word.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.screen_texts import screen_texts
from experiments.spec import Experiment
from participants.fonts import breakable, font_of, set_window_font

# light grey with near-black text: the usual named feedback colours (CSS 'green' is #008000, 'red'
# #ff0000) both keep good contrast on it, which they do not on a dark background
BACKGROUND = (0.75, 0.75, 0.75)
TEXT_COLOR = (-0.9, -0.9, -0.9)
HINT_COLOR = (-0.25, -0.25, -0.25)
WORD_HEIGHT = 0.075
PAGE_HEIGHT = 0.042
WRAP = 1.15


class Screens:
    """The stimuli of a session (fixation, words, prompt, feedback, text pages).

    Every text comes from `texts` (experiments.screen_texts: the spec's, else its language's).
    """

    def __init__(self, win: Any, exp: Experiment):
        from psychopy import visual  # PsychoPy loads only when a window opens

        self.win = win
        self.exp = exp
        set_window_font(win, exp.language)  # before any text stimulus: a CJK language needs its font
        self.texts = screen_texts(exp)
        self._visual = visual
        self.fixation = visual.TextStim(win, **font_of(win),
                                        text="+", height=WORD_HEIGHT, color=TEXT_COLOR, units="height")
        self.prompt = visual.TextStim(win, **font_of(win), text=self.texts["response_prompt"], height=WORD_HEIGHT,
                                      color=TEXT_COLOR, units="height")
        fb = exp.feedback
        self.feedback = {
            True: visual.TextStim(win, **font_of(win),
                                  text=self.texts["correct_text"], height=WORD_HEIGHT, color=fb.correct_color,
                                  units="height", bold=True),
            False: visual.TextStim(win, **font_of(win), text=self.texts["incorrect_text"], height=WORD_HEIGHT,
                                   color=fb.incorrect_color, units="height", bold=True),
        }
        self.no_response = visual.TextStim(win, **font_of(win),
                                           text=self.texts["no_response_text"], height=WORD_HEIGHT,
                                           color=fb.incorrect_color, units="height", bold=True)
        self.panel = PanelScreen(win, exp, self.texts) if exp.task.response == "panel" else None
        self.page_text = visual.TextStim(win, **font_of(win),
                                         text="", height=PAGE_HEIGHT, color=TEXT_COLOR, units="height",
                                         wrapWidth=WRAP, pos=(0, 0.05))
        self.page_hint = visual.TextStim(win, **font_of(win), text="", height=PAGE_HEIGHT * 0.75, color=HINT_COLOR,
                                         units="height", pos=(0, -0.4))
        self._words: list[Any] = []

    def prepare_words(self, words: tuple[str, ...]) -> list[Any]:
        """One TextStim per word, text set now (before the trial's first flip)."""
        while len(self._words) < len(words):
            self._words.append(self._visual.TextStim(self.win, **font_of(self.win),
                                                     text="", height=WORD_HEIGHT, color=TEXT_COLOR,
                                                     units="height"))
        stims = self._words[: len(words)]
        for stim, word in zip(stims, words, strict=False):
            stim.text = word
            stim.draw()  # the first draw of new text is slow: do it now, off screen
        self.win.clearBuffer()
        return stims

    def set_page(self, text: str, hint: str = "") -> None:
        # YAML folded text: one paragraph (broken into lines here in a CJK session)
        self.page_text.text = breakable(self.win, " ".join(text.split()), WRAP, PAGE_HEIGHT)
        self.page_hint.text = hint

    def draw_page(self) -> None:
        self.page_text.draw()
        if self.page_hint.text:
            self.page_hint.draw()


PANEL_BOX = (0.5, 0.16)  # width, height of one answer box (height units)
PANEL_X = 0.33  # centre of each box, left and right of the middle


LABEL_ROOM = 0.9  # share of a box's width its label may take


def text_width(win: Any, stim: Any) -> float:
    """A TextStim's drawn width in height units (PsychoPy reports its bounding box in pixels)."""
    return float(stim.boundingBox[0]) / float(win.size[1])


def fit_labels(win: Any, labels: list[Any], room: float) -> float:
    """Shrink the labels, all to one height, until the widest fits in `room` (height units): a long label
    such as UNGRAMMATICAL would otherwise run over its box's border. Returns the scale applied (1: none)."""
    first = labels[0].height
    for _ in range(4):  # glyphs are hinted per size: the width is not quite proportional; measure again
        widest = max(text_width(win, label) for label in labels)
        if widest <= room:
            break
        height = labels[0].height * room / widest * 0.99
        for label in labels:
            label.height = height
    return labels[0].height / first


class PanelScreen:
    """The two-option response panel: an answer box left and right, each with its label and key.

    Boxes are also the mouse targets (`answer_at`).
    """

    def __init__(self, win: Any, exp: Experiment, texts: dict[str, str]):
        from psychopy import visual  # PsychoPy loads only when a window opens

        panel = exp.task.panel
        assert panel is not None
        self.panel = panel
        order = [panel.left, "no_violation" if panel.left == "violation" else "violation"]
        self.boxes: dict[str, Any] = {}
        self.labels: dict[str, Any] = {}
        self.stims: list[Any] = []
        for answer, x in zip(order, (-PANEL_X, PANEL_X), strict=False):
            box = visual.Rect(win, width=PANEL_BOX[0], height=PANEL_BOX[1], pos=(x, 0), units="height",
                              lineColor=TEXT_COLOR, fillColor=(0.9, 0.9, 0.9), lineWidth=3)
            label = visual.TextStim(win, **font_of(win),
                                    text=texts[f"panel_label_{answer}"], height=WORD_HEIGHT * 0.7,
                                    color=TEXT_COLOR, units="height", pos=(x, 0), bold=True)
            hint = visual.TextStim(win, **font_of(win), text=texts[f"panel_key_{answer}"], height=PAGE_HEIGHT * 0.8,
                                   color=HINT_COLOR, units="height", pos=(x, -PANEL_BOX[1] / 2 - 0.05))
            self.boxes[answer] = box
            self.labels[answer] = label
            self.stims += [box, label, hint]
        fit_labels(win, list(self.labels.values()), PANEL_BOX[0] * LABEL_ROOM)
        if texts["panel_question"]:
            self.stims.append(visual.TextStim(win, **font_of(win),
                                              text=texts["panel_question"], height=PAGE_HEIGHT, color=TEXT_COLOR,
                                              units="height", pos=(0, 0.2), wrapWidth=WRAP))

    def draw(self) -> None:
        for s in self.stims:
            s.draw()

    def answer_at(self, mouse: Any) -> str | None:
        """The answer whose box the mouse is in, or None."""
        for answer, box in self.boxes.items():
            if box.contains(mouse):
                return answer
        return None


class Screenshots:
    """Keeps the first back-buffer image of each named screen, saved as PNG at the end.

    `grab` must be called after drawing and before `win.flip()` (the back buffer holds the frame
    that is about to be shown). It costs a few milliseconds, so it delays that flip, never the
    duration of a word already on screen.
    """

    def __init__(self, win: Any, folder: Path | None):
        self.win = win
        self.folder = Path(folder) if folder else None
        self.images: dict[str, Any] = {}

    def want(self, name: str) -> bool:
        return self.folder is not None and name not in self.images

    def grab(self, name: str) -> None:
        if not self.want(name):
            return
        self.images[name] = self.win.getMovieFrame(buffer="back")
        self.win.movieFrames.clear()

    def save(self) -> list[Path]:
        if self.folder is None:
            return []
        self.folder.mkdir(parents=True, exist_ok=True)
        out = []
        for name, im in self.images.items():
            path = self.folder / f"{name}.png"
            im.save(path)
            out.append(path)
        return out
