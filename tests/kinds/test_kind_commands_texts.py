"""A kind or a study adds its own `twinlab` commands and a kind its own screen texts, as data in its light
`__init__` (experiments/commands.py, experiments/screen_texts.py `kind_text`), found through the registries:
the toy kind (tests/support/kinds/colour_toy/) adds `twinlab stimuli colour-words` and its Italian label;
the Lakretz study's `stimuli generate` / `stimuli import lakretz-text` are listed without importing it."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
import toy_kinds  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOY_COMMANDS = "colour_toy.commands"


@pytest.fixture()
def toy(tmp_path):
    with toy_kinds.installed("colour_toy", tmp_path / "site"):
        yield


def test_the_toys_command_is_listed_without_importing_it_and_runs(toy, tmp_path):
    from experiments.cli import app

    sys.modules.pop(TOY_COMMANDS, None)
    r = CliRunner().invoke(app, ["stimuli", "--help"])
    assert r.exit_code == 0 and "colour-words" in r.output and "Write the toy's colour words" in r.output, r.output
    assert "generate" in r.output and "prompts" in r.output  # the study's and the core's, beside it
    assert TOY_COMMANDS not in sys.modules  # listed from the declaration alone
    r = CliRunner().invoke(app, ["stimuli", "colour-words", "--help"])
    assert r.exit_code == 0 and "--out" in r.output and "--force" in r.output, r.output
    out = tmp_path / "words.csv"
    r = CliRunner().invoke(app, ["stimuli", "colour-words", "--out", str(out)])
    assert r.exit_code == 0 and "wrote 4 words" in r.output, r.output
    assert out.read_text(encoding="utf-8").splitlines() == [
        "item,colourness,sentence,answer", "1,c,red,colour", "1,o,table,other", "2,c,blue,colour", "2,o,chair,other"]
    r = CliRunner().invoke(app, ["stimuli", "colour-words", "--out", str(out)])  # the command's own refusal
    assert r.exit_code == 2 and "--force" in r.output, r.output


def test_without_the_toy_its_command_is_gone():
    from experiments.cli import app

    r = CliRunner().invoke(app, ["stimuli", "--help"])
    assert r.exit_code == 0 and "colour-words" not in r.output
    r = CliRunner().invoke(app, ["stimuli", "colour-words"])
    assert r.exit_code == 2 and "No such command" in r.output


def test_the_studys_commands_are_listed_lazily_and_keep_their_names():
    """A fresh process: `twinlab stimuli --help` lists the study's commands but imports neither the command
    module nor the generator; the commands keep their names and options."""
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom experiments.cli import app\n"
            "r = CliRunner().invoke(app, ['stimuli', '--help'])\n"
            "assert r.exit_code == 0 and 'generate' in r.output and 'import' in r.output, r.output\n"
            "r = CliRunner().invoke(app, ['stimuli', 'import', '--help'])\n"
            "assert r.exit_code == 0 and 'lakretz-text' in r.output, r.output\n"
            "print(sorted(m for m in sys.modules if m.startswith('studies.lakretz2021.stimuli')))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    from experiments.commands import declared_commands

    study = {(d.group, d.name): (d.module, d.function) for d in declared_commands() if d.owner == "study lakretz2021"}
    assert study == {("stimuli", "generate"): ("studies.lakretz2021.stimuli.commands", "generate"),
                     ("stimuli import", "lakretz-text"): ("studies.lakretz2021.stimuli.commands", "import_text")}


def test_a_bad_declaration_is_refused_naming_the_owner():
    from experiments.commands import CommandDeclarationError, check_declaration

    good = {"group": "stimuli", "name": "x", "module": "m", "function": "f", "help": "h"}
    assert check_declaration("kind k", "pkg", good).module == "pkg.m"
    with pytest.raises(CommandDeclarationError, match="kind k: COMMANDS: group 'nowhere' is not one of"):
        check_declaration("kind k", "pkg", good | {"group": "nowhere"})
    with pytest.raises(CommandDeclarationError, match="kind k: COMMANDS: each entry is a mapping of exactly"):
        check_declaration("kind k", "pkg", {k: v for k, v in good.items() if k != "help"})
    with pytest.raises(CommandDeclarationError, match="non-empty texts"):
        check_declaration("kind k", "pkg", good | {"function": ""})


def test_a_kind_brings_its_own_screen_texts(toy, tmp_path):
    from experiments.kinds import kind_names
    from experiments.screen_texts import kind_text, kind_text_problems
    from experiments.spec import load_spec
    from experiments.tasks.record import answers
    from participants.tasks import settings_for

    assert [p for k in kind_names() for p in kind_text_problems(k)] == []
    assert kind_text("maze", "it-CH", "hint", left="E", right="I") == (
        "E per la parola a sinistra, I per la parola a destra")
    assert kind_text("completion", "zh", "hint", key="ENTER") == "Type your answer and press ENTER"  # no zh set
    assert kind_text("lexical_decision", "it", "label_nonword") == "Non parola"
    with pytest.raises(LookupError, match="task kind 'maze' declares no English text 'nope'"):
        kind_text("maze", "en", "nope")
    # the toy's own label, in the spec's language, where the spec gives none; the spec's own where it does
    for language, task, label in (("it", None, "Altro"), ("en", None, "Other"),
                                  ("it", {"kind": "colour_toy", "colour_text": "Un colore", "other_text": "No"}, "No")):
        p = toy_kinds.toy_spec(tmp_path, task)
        data = yaml.safe_load(p.read_text(encoding="utf-8")) | {"language": language}
        p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        exp = load_spec(p)
        from experiments.design_compiler import compile_sequence

        t = compile_sequence(exp, "p01", 1)[0]
        assert [a.label for a in answers(t, settings_for(exp, t))][1] == label


def test_the_core_names_no_kind_in_its_texts():
    from experiments.kinds import kind_names

    tree = ast.parse((ROOT / "experiments" / "screen_texts.py").read_text(encoding="utf-8"))
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    # a kind's name as a text or as the end of a text's key (the old `hint_completion`); `completion_code_text`
    # is the browser's completion code, not the kind
    named = [k for k in kind_names() if any(s == k or s.endswith("_" + k) for s in literals)]
    assert named == []
