"""The Mandarin pairs for people (seeds/003 Appendix D): the bundled spec hu_levy2023_mandarin_2afc and
`reproduce hu-levy2023-human --language zh`, with Chinese screens in PsychoPy and Chromium.

Chinese characters, not boxes: a font without a glyph draws every character as the same empty box,
so a real CJK character rendered in the session's font must differ from a private-use code point
(always a box) rendered the same way; checked in PsychoPy (Xvfb) and in Chromium's canvas on the
built page. Screenshots of both are saved (into TWINLAB_TASK_SCREENSHOTS when set) for a person to look at.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.design_compiler import compile_sequence
from experiments.screen_texts import screen_texts
from experiments.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = "hu_levy2023_mandarin_2afc"
FIX = ROOT / "tests" / "data" / "hu_levy2023" / "chinese" / "datasets"


def twinlab(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def test_bundled_spec_is_chinese_counterbalanced_and_builds_for_the_browser(tmp_path):
    exp = load_spec(SPEC)
    assert exp.language == "zh"
    texts = screen_texts(exp)
    for key in ("correct_text", "incorrect_text", "end_text", "continue_hint", "break_text"):
        assert _cjk(texts[key]), key
    assert _cjk(exp.task.settings().question) and all(_cjk(p) for p in exp.texts.instructions)
    orders, left_good = set(), []
    for sub in ("S01", "S02", "S03", "S04"):
        seq = compile_sequence(exp, sub)
        assert [t.role for t in seq.trials[:2]] == ["practice"] * 2 and len(seq) == 22
        for t in seq.trials:
            opts = t.mat["options"]
            assert len(opts) == 2 and all(_cjk(o) and " " not in o for o in opts) and t.mat["answer"] in opts
        from participants.tasks.logic import screen_order

        for t in seq.trials:
            order = tuple(screen_order(t, seq, None))
            orders.add(order)
            left_good.append(t.mat["options"][order[0]] == t.mat["answer"])
    assert len(orders) == 2 and 0.3 < sum(left_good) / len(left_good) < 0.7  # positions counterbalanced
    site = tmp_path / "site"
    r = twinlab("web", "build", SPEC, "--out", str(site))
    assert r.returncode == 0, r.stderr + r.stdout
    page = (site / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh">' in page
    bundle = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.js") if "sequences" in p.name)
    assert "他在吃苹果。" in bundle or "\\u4ed6\\u5728" in bundle


def test_hu_levy_human_accepts_the_chinese_pairs(tmp_path):
    r = twinlab("reproduce", "hu-levy2023-human", "--language", "zh", "--data", str(FIX), "--items", "0",
                "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr + r.stdout
    with open(FIX / "exp3" / "mandarin" / "corpus.csv", encoding="utf-8", newline="") as fh:
        pairs = list(csv.DictReader(fh))
    exp = load_spec(tmp_path / "hu_levy2023_human_zh.yaml")
    assert exp.language == "zh" and exp.task.settings().question == "哪一句话在中文里更为通顺？"
    seq = compile_sequence(exp, "P01")
    assert len(seq) == len(pairs)
    by_words = {t.mat["words_1"]: t for t in seq.trials}
    for p in pairs:  # the script for people, the authors' segmentation kept beside it
        t = by_words[p["good_sentence"]]
        assert t.mat["answer"] == p["good_sentence"].replace(" ", "") and t.mat["words_2"] == p["bad_sentence"]
    one = twinlab("reproduce", "hu-levy2023-human", "--language", "zh", "--data", str(FIX), "--items", "1",
                  "--out", str(tmp_path / "one"))
    assert one.returncode == 2 and "one phenomenon" in one.stderr + one.stdout and not (tmp_path / "one").exists()
    wrong = twinlab("reproduce", "hu-levy2023-human", "--language", "zh", "--data", str(ROOT / "tests" / "data" /
                    "hu_levy2023" / "datasets"), "--out", str(tmp_path / "x"))
    assert wrong.returncode == 2 and "exp3/mandarin/corpus.csv" in wrong.stderr + wrong.stdout


def test_cjk_lines_break_between_characters_only_in_a_cjk_session():
    from types import SimpleNamespace

    from participants.fonts import breakable, text_font

    assert text_font("zh") == text_font("zh-CN") == "Noto Sans CJK SC" and text_font("zh-TW") == "Noto Sans CJK TC"
    assert text_font("en") == text_font("it-CH") == ""
    zh, en = SimpleNamespace(twinlab_font="Noto Sans CJK SC"), SimpleNamespace()
    text = "您将看到并排的两个句子。请选出在中文里更为通顺的那一句：按F键选择左边的句子。"
    lines = breakable(zh, text, 0.42, 0.042).split("\n")  # room for 10 characters a line
    assert "".join(lines) == text and len(lines) >= 4 and all(len(x.rstrip("，。：")) <= 10 for x in lines)
    assert not any(x[0] in "，。：" for x in lines)  # punctuation never starts a line
    assert breakable(en, text, 0.42, 0.042) == text  # another language: untouched


def _shot_dir(tmp_path: Path) -> Path:
    return Path(os.environ.get("TWINLAB_TASK_SCREENSHOTS") or tmp_path / "shots")


@pytest.mark.gui
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.untimed  # an autopilot session and what it draws: nothing on a deadline
def test_psychopy_draws_chinese_characters_not_boxes(tmp_path):
    import shutil

    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    from participants.fonts import missing_font

    assert missing_font("zh") is None, missing_font("zh")
    shots = _shot_dir(tmp_path) / "psychopy_zh"
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable, "-m", "experiments.cli",
                        "run-human", SPEC, "--autopilot", "--participant", "autopilot01", "--out",
                        str(tmp_path / "data"), "--screenshots", str(shots)], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert {"instructions.png", "choice.png", "choice_feedback.png"} <= {p.name for p in shots.iterdir()}
    probe = ("import numpy as np\nfrom psychopy import visual\nfrom participants.fonts import font_of, "
             "set_window_font\nwin = visual.Window((400, 200), units='height', allowGUI=False)\n"
             "set_window_font(win, 'zh')\ndef ink(ch):\n    win.clearBuffer()\n    visual.TextStim(win, text=ch, "
             "height=0.3, **font_of(win)).draw()\n    return np.asarray(win.getMovieFrame(buffer='back'))\n"
             "a, b, c = ink('\\u4e2d'), ink('\\u6587'), ink('\\ue000')\n"
             "print('DIFFER', bool((a != c).any()), bool((b != c).any()), bool((a != b).any()))\nwin.close()\n")
    p = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable, "-c", probe], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "DIFFER True True True" in p.stdout, p.stdout + p.stderr[-2000:]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.untimed  # an autopilot session and what it draws: nothing on a deadline
def test_chromium_draws_chinese_characters_not_boxes(tmp_path):
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    site = tmp_path / "site"
    assert twinlab("web", "build", SPEC, "--out", str(site)).returncode == 0
    shots = _shot_dir(tmp_path) / "chromium_zh"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu",
                                                                          "--allow-file-access-from-files"])
        page = b.new_page(viewport={"width": 1024, "height": 768})
        page.goto((site / "index.html").as_uri() + "?participant=P01&session=1")
        page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')", timeout=30_000)
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / "instructions.png"))
        assert "请选出" in page.inner_text("body")
        for _ in range(6):
            if page.evaluate("() => document.querySelector('.tl-stage')?.dataset.screen") == "choice":
                break
            page.keyboard.press(" ")
            page.wait_for_timeout(900)
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / "choice.png"))
        assert "哪一句话在中文里更为通顺" in page.inner_text("body")
        differ = page.evaluate("""() => {
            const font = getComputedStyle(document.querySelector('.tl-stage')).fontFamily;
            const ink = (ch) => { const c = document.createElement('canvas'); c.width = c.height = 64;
                const x = c.getContext('2d'); x.font = '48px ' + font; x.fillText(ch, 4, 52);
                return Array.from(x.getImageData(0, 0, 64, 64).data).join(','); };
            const a = ink('\\u4e2d'), b = ink('\\u6587'), box = ink('\\ue000');
            return [a !== box, b !== box, a !== b]; }""")
        b.close()
    assert differ == [True, True, True]


@pytest.mark.model
@pytest.mark.long
def test_a_model_subject_runs_the_same_spec(tmp_path):
    r = twinlab("run-model", SPEC, "--subjects", "1", "--out", str(tmp_path / "m"), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:] + r.stdout[-2000:]
    rows = [row for f in (tmp_path / "m").rglob("*_data.csv") for row in csv.DictReader(open(f, encoding="utf-8"))]
    assert len(rows) == 22 and all(_cjk(row["response"]) for row in rows if row["response"])
