"""Small things a new user hit (messages, a warning, texts on screen)."""
from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest
import yaml
from cli_refusal import refused

from experiments.screen_texts import block_intro, block_sizes, key_label, page_hint, screen_texts
from experiments.spec import SpecError, bundled_spec_path, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]


def _data(name: str = "lakretz2021_replication") -> dict:
    return yaml.safe_load(bundled_spec_path(name).read_text(encoding="utf-8"))


def test_unquoted_yes_no_labels_get_a_hint_to_quote_them(tmp_path):
    text = bundled_spec_path("lakretz2021_replication").read_text(encoding="utf-8").replace(
        "labels: {violation: VIOLATION, no_violation: ACCEPTABLE}", "labels: {violation: YES, no_violation: NO}")
    assert "violation: YES" in text
    p = tmp_path / "yes.yaml"
    p.write_text(text, encoding="utf-8")
    refused("validate", str(p), match=["task.panel.labels.violation", "valid string", "in quotes", '"YES"',
                                       "(value: True)", "task.panel.labels.no_violation"])


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["task"]["panel"].update(labels={1: "A", "no_violation": "B"}), "task.panel.labels.1 (a key): "),
    (lambda d: d["blocks"][0].update(sessions=["x"]), "blocks.0.sessions.0: "),
    (lambda d: d["blocks"][0].update(trials="x"), "blocks.0.trials: "),
])
def test_error_paths_are_field_paths_without_a_trailing_dot_or_pydantic_markers(edit, expected):
    data = _data()
    edit(data)
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    msg = str(err.value)
    assert expected in msg, msg
    for bad in (".:", ".[key]", "literal[", "list[", "Value error"):
        assert bad not in msg, msg


def test_a_figure_too_small_for_its_panels_grows_instead_of_warning():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.report.figures import tight_layout

    def crowded():
        fig, axes = plt.subplots(2, 8, figsize=(5, 3))
        for ax in axes.flat:
            ax.set_title("SmolLM2-135M · running\ncontext · forced_choice", fontsize=8)
            ax.set_ylabel("error rate (inner)")
        return fig

    with warnings.catch_warnings(record=True) as plain:  # the reference: matplotlib's own call warns here
        warnings.simplefilter("always")
        crowded().tight_layout()
    assert any("Tight layout not applied" in str(w.message) for w in plain)
    fig = crowded()
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        tight_layout(fig)
        fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    assert [str(w.message) for w in ours] == []
    assert fig.get_size_inches()[0] > 5  # it grew to hold its titles


def test_a_block_intro_says_the_number_of_trials_the_session_runs():
    from experiments.design_compiler import compile_sequence

    data = _data()
    data["blocks"][0]["intro_text"] = "First, a practice block of {trials} sentences."
    exp = parse_spec(data)
    seq = compile_sequence(exp, "P01", None)
    intro = exp.block("training").intro_text
    assert block_intro(intro, block_sizes(seq.trials).get("training")) == "First, a practice block of 40 sentences."
    assert (block_intro(intro, block_sizes(seq.trials[:12]).get("training"))
            == "First, a practice block of 12 sentences.")
    assert block_intro("No number here.", 12) == "No number here."


def test_a_page_that_names_its_key_gets_no_second_hint():
    exp = load_spec("lakretz2021_nested")
    texts = screen_texts(exp)
    hint = texts["continue_hint"]
    assert hint == "Press SPACE to continue"
    assert page_hint("Press SPACE to begin.", hint, texts["continue_key_label"]) == ""
    assert page_hint(exp.texts.instructions[0], hint, texts["continue_key_label"]) == hint
    assert page_hint("The SPACESHIP lands.", hint, "SPACE") == hint  # a word, not a part of one
    assert page_hint("Premi SPAZIO per iniziare.", "Premi SPAZIO per continuare", key_label("space", "it")) == ""


@pytest.mark.gui
@pytest.mark.slow
def test_analyze_on_autopilot_sessions_only_says_why_nothing_is_left(tmp_path):
    try:
        from tests.participants.test_participants_gui import env_for
    except ModuleNotFoundError:
        from test_participants_gui import env_for
    import shutil

    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    data = _data("lakretz2021_nested")
    data["timing"] = dict(fixation_ms=50, word_ms=50, gap_ms=20, response_ms=300, feedback_ms=50, iti_ms=20)
    spec = tmp_path / "fast.yaml"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "sessions"
    import subprocess
    import sys

    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1024x768x24", sys.executable, "-m", "experiments.cli",
                        "run-human", str(spec), "--autopilot", "--participant", "autopilot1", "--trials", "3",
                        "--out", str(out)], cwd=ROOT, env={**env_for(""), "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    msg = refused("analyze", str(out), "--out", str(tmp_path / "report"), "--no-mixed",
                  match=["no trials to analyse: every session is an autopilot run", "simulated",
                         "study-lakretz2021nested_subject-autopilot1_session-1_data.csv"])
    assert not msg.rstrip().endswith(":")
