"""Every model option of every `twinlab reproduce` command is honoured or refused, never ignored (
`reproduce hu-frank2024 --data` once ran SmolLM2 under `--backend seq2seq`).

Each case gives one option a value that only works if the option reaches the model loader, and asserts the
refusal that proves it did: `--backend seq2seq` without `--model` (the seq2seq backend's own refusal; a
dropped --backend would load the bundled causal model and run), `-B no_such_setting=1` (the backend's
settings check names it), `--model /nonexistent/...` (named), and `--models FILE` naming a missing model.
The cases are derived from the commands' own signatures: a new command or a new model option without a case
here fails `test_every_model_option_of_every_command_has_a_case`.
"""
from __future__ import annotations

import inspect

import pytest
from cli_refusal import ROOT, refused

MODEL_OPTIONS = {"model", "backend", "backend_option", "models_file"}
MISSING = "/nonexistent/twinlab-model-33"


def _hu_frank_release(tmp_path):
    from tests.support.hu_frank_release import write_release, write_stimuli

    return write_stimuli(write_release(tmp_path / "rel"))


# command (as typed), the mode's own arguments (a function of tmp_path), the model options it accepts
MODES = {
    "lampinen2024": (lambda t: ["lampinen2024", "-n", "1", "--prompts", "none"],
                     {"model", "backend", "backend_option"}),
    "hu-levy2023": (lambda t: ["hu-levy2023", "--data", str(ROOT / "tests" / "data" / "hu_levy2023" / "datasets"),
                               "--items", "1"], {"model", "backend", "backend_option"}),
    "hu-frank2024": (lambda t: ["hu-frank2024", "-n", "1"], {"model", "backend", "backend_option"}),
    "hu-frank2024 --data": (lambda t: ["hu-frank2024", "--data", str(_hu_frank_release(t)), "--items", "1"],
                            {"model", "backend", "backend_option", "models_file"}),
}
REFUSING = {"hu-frank2024 --authors-outputs"}  # reads released outputs: every model option is refused
NO_MODEL = {"hu-levy2023-human"}  # writes a study for people: no model options


def _cases(option: str, tmp_path) -> tuple[list[str], str]:
    if option == "model":
        return ["--model", MISSING], MISSING
    if option == "backend":
        return ["--backend", "seq2seq"], "--backend seq2seq needs --model"
    if option == "backend_option":
        return ["-B", "no_such_setting=1"], "no_such_setting"
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  - {{path: {MISSING}, family: mine, size: 1M}}\n")
    return ["--models", str(models)], MISSING


def test_every_model_option_of_every_command_has_a_case():
    from reproductions.cli import app

    for cmd in app.registered_commands:
        name = cmd.name or cmd.callback.__name__.replace("_", "-")
        params = set(inspect.signature(cmd.callback).parameters) & MODEL_OPTIONS
        if name in NO_MODEL:
            assert not params, f"{name} takes {params}: give it cases in MODES"
            continue
        covered = set().union(*(opts for mode, (_, opts) in MODES.items() if mode.split()[0] == name))
        assert params <= covered, f"reproduce {name}: model option(s) {params - covered} have no case here"


@pytest.mark.slow
@pytest.mark.parametrize("mode, option", [(m, o) for m, (_, opts) in MODES.items() for o in sorted(opts)])
def test_a_model_option_reaches_the_model_loader(tmp_path, mode, option):
    args, expect = _cases(option, tmp_path)
    base = MODES[mode][0](tmp_path)
    refused("reproduce", *base, *args, "--out", str(tmp_path / "out"), "-q", match=expect, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("option", ["model", "backend", "backend_option", "models_file"])
def test_authors_outputs_refuses_every_model_option(tmp_path, option):
    args, _ = _cases(option, tmp_path)
    refused("reproduce", "hu-frank2024", "--authors-outputs", str(_hu_frank_release(tmp_path)), *args,
            "--out", str(tmp_path / "out"), match="runs no model", timeout=300)
    assert not (tmp_path / "out").exists()


def test_the_modes_named_here_exist():
    from reproductions.cli import app

    names = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    assert {m.split()[0] for m in MODES} | {m.split()[0] for m in REFUSING} | NO_MODEL == names
