"""The real Lakretz et al. (2021) paradigm in the spec: panel response, sessions, any language, fillers."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence, compile_sessions
from experiments.spec import SpecError, bundled_spec_path, load_spec
from experiments.trials import Trial, TrialSequence
from stimuli.files import load_items, save_items

REPLICATION = bundled_spec_path("lakretz2021_replication")
ITALIAN = bundled_spec_path("lakretz2021_italian_example")
ITALIAN_TSV = Path(__file__).resolve().parents[2] / "stimuli" / "examples" / "lakretz2021_italian_example.tsv"
# per participant over both sessions, from the released logs (see the spec's header)
RELEASE_COUNTS = {
    ("long_nested", "none"): 80, ("long_nested", "inner"): 40, ("long_nested", "outer"): 40,
    ("long_nested", "other"): 80,
    ("short_nested", "none"): 40, ("short_nested", "inner"): 20, ("short_nested", "outer"): 20,
    ("short_nested", "other"): 40,
    ("long_successive", "none"): 40, ("long_successive", "inner"): 40, ("long_successive", "other"): 40,
    ("short_successive", "none"): 20, ("short_successive", "inner"): 20, ("short_successive", "other"): 20,
}


@pytest.fixture(scope="module")
def replication():
    return load_spec(REPLICATION)


@pytest.fixture(scope="module")
def sessions(replication):
    return compile_sessions(replication, "P07")


def test_replication_spec_mirrors_the_release(replication, sessions):
    t = replication.timing
    assert (t.fixation_ms, t.word_ms, t.gap_ms, t.panel_delay_ms, t.response_ms) == (610, 246, 246, 1500, 1500)
    assert replication.sessions == 2 and replication.task.response == "panel"
    assert replication.task.panel.labels == {"violation": "VIOLATION", "no_violation": "ACCEPTABLE"}
    s1, s2 = sessions
    assert (s1.session, s2.session) == (1, 2)
    main = [tr for tr in s1 if tr.block == "main"] + list(s2)
    assert sum(tr.block == "main" for tr in s1) == len(s2) == 270  # two sessions of 270 trials
    assert ([tr.block for tr in s1[:40]] == ["training"] * 40
            and all(tr.study_record.lexicon == "training" for tr in s1[:40]))
    counts = collections.Counter((tr.study_record.structure, tr.study_record.violation_position) for tr in main)
    assert counts == RELEASE_COUNTS
    # each condition gets its share: long_nested 8 conditions x 10 acceptable over both sessions
    ln = collections.Counter(tr.condition for tr in main
                             if tr.study_record.structure == "long_nested" and tr.study_record.grammatical)
    assert set(ln.values()) == {10} and len(ln) == 8
    assert all(tr.feedback for tr in s1) and all(tr.feedback for tr in s2)
    # the design is dealt out over the sessions: per session the type counts differ (as in the logs)
    per = [collections.Counter(tr.study_record.structure for tr in s if tr.block == "main") for s in sessions]
    assert per[0] != per[1] and per[0] + per[1] == collections.Counter(tr.study_record.structure for tr in main)


def test_no_item_repeats_across_sessions_and_sessions_are_separate_sequences(replication, sessions):
    s1, s2 = sessions
    ids = [tr.item_id for tr in s1] + [tr.item_id for tr in s2]
    assert len(ids) == len(set(ids))
    assert [tr.trial_index for tr in s2] == list(range(len(s2)))  # trial_index restarts per session
    assert s1.sequence_hash != s2.sequence_hash
    again = compile_sequence(replication, "P07", session=2)
    assert again.to_json() == s2.to_json() and again.session == 2
    assert TrialSequence.from_json(s2.to_json()).to_json() == s2.to_json()
    with pytest.raises(SpecError, match="session 3.*2 session"):
        compile_sequence(replication, "P07", session=3)


def test_fillers_are_violations_of_another_kind(sessions):
    fillers = [tr for s in sessions for tr in s if tr.study_record.violation_position == "other"]
    assert fillers and all(tr.study_record.correct_response == "violation" and tr.study_record.dependency is None
                           for tr in fillers)
    for tr in fillers:
        assert (tr.words[tr.study_record.critical_index].rstrip(".") == tr.study_record.critical_word
                != tr.study_record.correct_form)
        assert (tr.study_record.critical_word.endswith("ing") or tr.study_record.critical_index == 1
                or tr.study_record.critical_index == 4)
    kinds = collections.Counter(tr.study_record.critical_word.endswith("ing") for tr in fillers)
    assert kinds[True] > 3 * kinds[False] > 0  # mostly verb-form fillers, some inanimate subjects


def test_existing_specs_keep_their_hashes():
    """Adding the paradigm's fields did not change what existing specs hash and compile to, so their
    sessions stay resumable (hashes computed with the code before this change)."""
    exp = load_spec("lakretz2021_nested")
    seq = compile_sequence(exp, "S01")
    assert exp.spec_hash == "91d1347b4fcbc6bb"
    assert seq.sequence_hash == "5fe1f29c0babda64" and compile_sequence(exp, "P07").sequence_hash == "cbd458d011a2c487"
    assert seq.session == 1 and "session" not in json.loads(seq.to_json())
    assert compile_sessions(exp, "S01")[0].to_json() == seq.to_json()


# ---- any language, multi-word RSVP units ---------------------------------------------------------
def test_italian_file_units_and_rows():
    items = load_items(ITALIAN_TSV)
    assert len(items) == 20 and items[0].words[0] == "il cuoco"
    exp = load_spec(ITALIAN)
    assert exp.language == "it"
    seq = compile_sequence(exp, "P1")
    assert len(seq) == 20
    for tr in seq:
        assert tr.words[tr.study_record.critical_index] == tr.study_record.critical_word
        row = tr.to_row()
        units = json.loads(row["rsvp_units"])
        assert units == list(tr.words) and row["words"] == " ".join(units)
        assert len(row["words"].split(" ")) > len(units)  # "l' uomo", "il cuoco": more words than units
        # the table's critical_index counts words (as the release importer's rows do), units are separate
        assert row["words"].split(" ")[row["critical_index"]] == tr.study_record.critical_word.split(" ")[0]
        back = Trial.from_dict({**row, "dependency": row["dependency"] or ""})
        assert back == tr
    assert {tr.study_record.violation_position for tr in seq} >= {"none", "inner", "other"}


def test_units_round_trip_through_a_file(tmp_path):
    items = load_items(ITALIAN_TSV)
    back = load_items(save_items(items, tmp_path / "copy.tsv"))
    assert [(i.words, i.verbs, i.filler) for i in back] == [(i.words, i.verbs, i.filler) for i in items]
    text = (tmp_path / "copy.tsv").read_text(encoding="utf-8")
    assert "il cuoco|che|la maestra" in text


# ---- broken specs: one clear error naming the file and the field or line ------------------------
def _write(tmp_path, data, name="broken.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


def _replication_data():
    return yaml.safe_load(REPLICATION.read_text())


@pytest.mark.parametrize("name,mutate,needles", [
    ("panel without labels", lambda d: d["task"]["panel"].pop("labels"), ["task.panel.labels", "Field required"]),
    ("panel label missing", lambda d: d["task"]["panel"].update(labels={"violation": "V"}),
     ["task.panel.labels", "no_violation"]),
    ("panel response without panel", lambda d: d["task"].pop("panel"), ["task", "response: panel needs `panel:`"]),
    ("sessions 0", lambda d: d.update(sessions=0), ["sessions", "greater than or equal to 1", "0"]),
    ("block in a session that does not exist", lambda d: d["blocks"][0].update(sessions=[3]),
     ["'training'", "sessions [3]", "sessions: 2"]),
    ("language with the English generator", lambda d: d.update(language="it"), ["language 'it'", "stimuli.file"]),
    ("panel key is the quit "
     "key", lambda d: d["task"]["panel"].update(keys={"violation": "escape", "no_violation": "j"}),
     ["escape", "quit"]),
    ("structures and design", lambda d: d["blocks"][1].update(structures=["long_nested"]), ["blocks.1", "either"]),
    ("unknown version", lambda d: d["blocks"][1]["design"][0]["versions"].update(fillers=1),
     ["blocks.1.design.0.versions.fillers"]),
    ("unknown design structure", lambda d: d["blocks"][1]["design"][0].update(structure="objrel"),
     ["blocks.1.design.0.structure", "'objrel'", "known:"]),
])
def test_broken_paradigm_specs(tmp_path, name, mutate, needles):
    data = _replication_data()
    mutate(data)
    p = _write(tmp_path, data)
    with pytest.raises(SpecError) as err:
        load_spec(p)
    msg = str(err.value)
    assert str(p) in msg, msg
    for n in needles:
        assert n in msg, msg


def test_stimulus_file_with_critical_index_out_of_range_names_file_and_line(tmp_path):
    lines = ITALIAN_TSV.read_text(encoding="utf-8").splitlines()
    cells = lines[3].split("\t")
    cells[5] = "9"  # inner_index of item it03 (6 units)
    lines[3] = "\t".join(cells)
    bad = tmp_path / "italiano.tsv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = yaml.safe_load(ITALIAN.read_text(encoding="utf-8"))
    data["stimuli"]["file"] = str(bad)
    p = _write(tmp_path, data, "italian.yaml")
    with pytest.raises(SpecError) as err:
        load_spec(p)
    msg = str(err.value)
    assert str(p) in msg and str(bad) in msg and "line 4" in msg and "inner_index 9 is outside" in msg, msg


def test_design_version_the_structure_lacks_is_named(tmp_path):
    data = _replication_data()
    data["blocks"][1]["design"][2]["versions"]["outer"] = 1  # file-less successive has outer; single has no inner
    data["blocks"][1]["design"][3] = {"structure": "single", "versions": {"inner": 1}}
    exp = load_spec(_write(tmp_path, data))
    with pytest.raises(SpecError, match="design entry 3 \\(single\\).*'inner' is not available"):
        compile_sequence(exp, "P1")


def test_cli_plan_session_2_and_refuse_session_3(tmp_path):
    from typer.testing import CliRunner

    from experiments.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["plan", "lakretz2021_replication", "--subject", "P07", "--session", "2",
                              "--out", str(tmp_path / "s2.json")])
    assert res.exit_code == 0, res.output
    seq = TrialSequence.from_json((tmp_path / "s2.json").read_text(encoding="utf-8"))
    assert seq.session == 2 and seq.to_json() == compile_sequence(load_spec(REPLICATION), "P07", session=2).to_json()
    for cmd in (["plan", "lakretz2021_replication", "-s", "P07", "--session", "3"],
                ["run-model", "lakretz2021_replication", "--session", "3", "--out", str(tmp_path / "m")]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2 and "session 3" in res.output and "2 session(s)" in res.output, res.output
    assert not (tmp_path / "m").exists()  # refused before a model is loaded or a file written
