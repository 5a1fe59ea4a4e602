"""The template kind (kinds/_template/) is a working kind once copied: a test copies the folder into a temporary
package under a new name, registers it as a third party's package is (a `twinlab.kinds` entry point), and runs
it through `validate` (the spec, the items' check naming a bad line), the compiler, a model protocol's scoring
of the trial and the session's header; the folder itself is never registered."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.kinds import kind_names
from experiments.spec import SpecError, load_spec
from experiments.tasks import get_task
from experiments.trials import freeze_pairs
from model_subjects.decisions import Scored, decide
from model_subjects.protocol_base import Answer
from tests.model_subjects.test_correct_answer import probed

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import site_folder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NAME = "my_yes_no"  # the copy's name: the kind is named after its folder
ITEMS = ["1,a,The dog barks.,yes", "1,b,The dog bark.,no", "2,a,The cats sleep.,yes", "2,b,The cats sleeps.,no"]


@pytest.fixture()
def copied(tmp_path):
    """The template copied to <tmp>/pkgs/my_yes_no and registered by an entry point, as a user would."""
    from experiments.kinds import refresh

    shutil.copytree(ROOT / "kinds" / "_template", tmp_path / "pkgs" / NAME)
    paths = [str(site_folder(NAME, tmp_path)), str(tmp_path / "pkgs")]
    sys.path[:0] = paths
    refresh()
    try:
        yield tmp_path
    finally:
        for p in paths:
            sys.path.remove(p)
        for mod in [m for m in sys.modules if m == NAME or m.startswith(NAME + ".")]:
            del sys.modules[mod]
        refresh()


def spec(tmp: Path, rows: list[str]) -> Path:
    (tmp / "items.csv").write_text("item,form,sentence,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = {"name": "yes_no", "seed": 1, "design": {"file": "items.csv", "factors": {"form": ["a", "b"]},
                                                    "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": False}],
            "task": {"kind": NAME, "question": "Is it good English?"}, "texts": {"instructions": ["Judge."]}}
    p = tmp / "yes_no.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def test_the_template_folder_is_not_a_kind():
    assert "_template" not in kind_names() and NAME not in kind_names()


def test_a_copy_of_the_template_is_a_working_kind(copied):
    assert NAME in kind_names()
    kind = get_task(NAME)
    assert kind.name == NAME and kind.runners == ("model",) and kind.model_protocols == ("meta",)
    exp = load_spec(spec(copied, ITEMS))
    assert exp.task.settings().question == "Is it good English?"
    seq = compile_sequence(exp, "p01", 1)
    assert len(seq) == 2 and {t.task for t in seq} == {NAME}
    for t in seq:  # the kind's one scoring rule, against the item's own answer
        assert kind.score(t, t.mat["answer"]) is True and kind.score(t, "maybe") is False
    header = seq.table_columns()
    assert "yes_margin" in header and header[-1] == "form"
    assert not {"structure", "critical_index", "lexicon", "rsvp_units"} & set(header)
    from model_subjects.tasks.registry import task_protocol

    proto = task_protocol(NAME, "meta", task=exp.task)
    t = seq[0]
    q = proto.queries(t)[0]
    assert q.prompt.endswith("Is it good English?\nAnswer:") and [o.label for o in q.options] == ["yes", "no"]
    d = proto.decide(t, [[-1.0, -3.0]])
    assert d.response == "yes" and d.correct is (t.mat["answer"] == "yes")


def test_a_copy_names_its_right_answer_and_decides_through_the_decision_step(copied):
    """The copy's protocol names the item's answer (`correct_answer`: what a weight learner teaches), the one the
    decision step scores correct (the old probe, tests/model_subjects/test_correct_answer.py), and none without an
    answer; the runner's decision step passes every argument by name, `measured` too."""
    from model_subjects.tasks.registry import task_protocol

    exp = load_spec(spec(copied, ITEMS))
    proto = task_protocol(NAME, "meta", task=exp.task)
    answers = []
    for t in [*compile_sequence(exp, "p01", 1), *compile_sequence(exp, "p02", 1)]:
        answer = t.mat["answer"]
        answers.append(answer)
        assert proto.correct_answer(t) == Answer(answer, " " + answer)  # the hand rule: the item's answer
        assert probed(proto, t) == (answer, " " + answer)
        bare = dataclasses.replace(t, materials=freeze_pairs({k: v for k, v in t.mat.items() if k != "answer"}))
        assert proto.correct_answer(bare) is None and probed(proto, bare) is None
        d = decide(proto, t, Scored([[-1.0, -3.0]], measured=None))
        assert d.response == "yes" and d.correct is (answer == "yes")
    assert sorted(set(answers)) == ["no", "yes"]


def test_validate_names_the_bad_line_of_a_copy(copied):
    with pytest.raises(SpecError, match="line 3: answer 'maybe' is not one of yes, no"):
        load_spec(spec(copied, ["1,a,The dog barks.,yes", "1,b,The dog bark.,maybe", *ITEMS[2:]]))
    env_path = f"{site_folder(NAME, copied)}:{copied / 'pkgs'}:{ROOT}"
    run = subprocess.run([sys.executable, "-m", "experiments.cli", "validate", str(spec(copied, ITEMS))],
                         capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stdout + run.stderr
