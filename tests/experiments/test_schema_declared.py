"""The trial-table schema is the core's columns plus the columns the registered studies and kinds declare
(part 1): the core names no Lakretz column (the study adds them and declares the header layout every
session has written); a kind's columns are plain data in its folder's `__init__.py`; a third party's kind adds
a column to its own sessions' headers only, and a session of a bundled kind keeps its header."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from experiments import core_columns, schema
from experiments.design_compiler import compile_sequence
from experiments.spec import bundled_spec_path, load_spec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import installed, site_folder, toy_spec  # noqa: E402

TOY = "colour_toy_b"


def study_table():
    from studies.lakretz2021 import columns

    return columns


def string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_core_schema_names_no_column_of_the_study_nor_of_a_kind():
    from experiments.kinds import declared

    study = {c for c, _, _ in study_table().COLUMNS}
    kinds = {c for cols in declared("COLUMNS").values() for c, _, _ in cols}
    assert {"structure", "dependency", "violation_position", "critical_word", "lexicon"} <= study
    assert {"rating", "option_order", "word_rts_ms", "early_response"} <= kinds
    core = {c for c, _, _ in core_columns.CORE_COLUMNS}
    assert not core & study and not core & kinds
    # nor as a literal anywhere in the module (a rule on a study's column would need one)
    assert not string_constants(ROOT / "experiments" / "schema.py") & (study | kinds)
    assert schema.declared().owners["structure"] == "study lakretz2021"
    assert schema.declared().owners["rating"] == "kind rating" and schema.declared().owners["item"] == "the core"


# the built-in kinds' columns no layout names (declared after the layout was kept byte for byte): the Maze kind's
ADDED_BY_BUILT_IN = {"maze": ["word_correct", "first_error"]}


def test_the_declared_layout_is_every_built_in_column_once():
    """Every built-in column (the core's, the study's, the kinds') has its place in the earlier general layout
    but the columns of a kind added since (ADDED_BY_BUILT_IN), which only that kind's sessions carry; the Lakretz
    header is its beginning. Today's general layout is the core's columns alone."""
    table = study_table()
    assert schema.COLUMN_NAMES == list(table.HEADER) and len(schema.COLUMN_NAMES) == 44
    earlier = list(table.EARLIER_GENERAL_HEADER)
    assert schema.GENERAL_COLUMN_NAMES == [c for c, _, _ in core_columns.CORE_COLUMNS]
    added = [c for cols in ADDED_BY_BUILT_IN.values() for c in cols]
    assert sorted(schema.column_names()) == sorted(earlier + added)
    assert schema.added_columns(schema.declared().by_kind, earlier) == added
    for kind, cols in ADDED_BY_BUILT_IN.items():
        assert schema.added_columns([kind], earlier) == cols == list(schema.declared().by_kind[kind])
    assert set(schema.DTYPES) == set(schema.DESCRIPTIONS) == set(earlier) | set(added)
    assert schema.DTYPES["critical_index"] == "Int64" and schema.DTYPES["rating"] == "Float64"
    # the dataset description keeps the words it has always carried for the core's columns
    described = {c: d for c, _, d in schema.described_columns()}
    assert described["condition"] == "grammatical number of the nouns, e.g. PSP" != schema.DESCRIPTIONS["condition"]
    assert [c for c, _, _ in schema.described_columns()] == schema.COLUMN_NAMES


def test_what_a_table_must_fill():
    assert schema.CORE_REQUIRED == schema.required_columns(True)
    assert schema.REQUIRED == ("subject_id", "subject_kind", "experiment", "block", "trial_index", "structure",
                               "condition", "dependency", "violation_position", "correct")


def test_every_kinds_recorded_column_is_declared():
    from experiments.tasks import registry

    names = set(schema.column_names())
    assert {k: set(kind.recorded) - names for k, kind in registry().items() if set(kind.recorded) - names} == {}


def test_a_toy_kinds_column_is_in_its_sessions_header_only(tmp_path):
    """colour_toy_b declares `colour_margin`: its design's header is the general layout, that column, then the
    factor; a bundled kind's spec compiled while the toy is installed keeps its header."""
    bundled = compile_sequence(load_spec(bundled_spec_path("acceptability_yesno")), "S01").table_columns()
    general = schema.GENERAL_COLUMN_NAMES
    assert "colour_margin" not in schema.column_names()
    with installed(TOY, tmp_path):
        assert schema.DTYPES["colour_margin"] == "Float64"
        assert schema.declared().owners["colour_margin"] == f"kind {TOY}"
        seq = compile_sequence(load_spec(toy_spec(tmp_path, task={"kind": TOY})), "S01")
        header = seq.table_columns()
        assert header == general + ["colour_margin", "colourness"]
        assert schema.is_table_header(header)
        again = compile_sequence(load_spec(bundled_spec_path("acceptability_yesno")), "S01").table_columns()
        assert again == bundled and "colour_margin" not in again
    assert "colour_margin" not in schema.DTYPES  # the registry forgot the kind, and its column with it


def test_no_bundled_spec_gains_a_column():
    """Every bundled spec's header as its sessions were written before (the earlier layout, and its factors) has
    no kind's added column, except the Maze example's own two (its kind adds them to every Maze session), so every
    such session resumes with its header byte for byte."""
    for spec in sorted((ROOT / "experiments" / "specs").glob("*.yaml")):
        header = compile_sequence(load_spec(spec), "S01").table_columns(earlier=True)
        added = ["word_correct", "first_error"] if spec.name == "maze.yaml" else []
        assert schema.kinds_added_in(header) == added, spec.name


def test_headers_written_before_are_accepted():
    general = list(study_table().EARLIER_GENERAL_HEADER)
    assert schema.is_table_header(schema.GENERAL_COLUMN_NAMES + ["head_number"])
    assert schema.is_table_header(list(schema.COLUMN_NAMES))
    assert schema.is_table_header(general) and schema.is_table_header(general + ["head_number"])
    assert not schema.is_table_header(schema.COLUMN_NAMES[::-1])
    assert not schema.is_table_header(general + ["rating"])  # a column twice


def bad_kind(tmp_path: Path, name: str, columns: str):
    """A third party's kind whose `__init__` declares `columns` (installed like the toy kinds)."""
    pkg = tmp_path / "pkgs" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'"""A kind with a bad declaration."""\nCOLUMNS = {columns}\n', encoding="utf-8")
    return [str(site_folder(name, tmp_path)), str(tmp_path / "pkgs")]


@pytest.mark.parametrize("columns, message", [
    ('(("rating", "Float64", "again"),)', "column 'rating' is declared by kind rating"),
    ('(("subject_id", "string", "mine"),)', "column 'subject_id' is declared by the core"),
    ('(("odd", "float", "x"),)', "column 'odd' has dtype 'float'"),
    ('("odd", "string")', r"a column is declared as (name, dtype, meaning)"),
])
def test_a_bad_declaration_is_refused_naming_the_kind(tmp_path, capsys, columns, message):
    """A third party's kind whose columns are malformed or taken is refused by the registry (one warning line
    naming its entry point and why), and the schema of the built-ins stays whole."""
    from experiments.kinds import kind_names, refresh

    paths = bad_kind(tmp_path, "bad_kind_x", columns)
    sys.path[:0] = paths
    refresh()
    try:
        assert "bad_kind_x" not in kind_names()
        warned = capsys.readouterr().err
        assert "warning: twinlab.kinds entry point 'bad_kind_x = bad_kind_x' refused: " in warned and message in warned
        assert schema.DTYPES["rating"] and schema.declared().owners["subject_id"] == "the core"
    finally:
        for p in paths:
            sys.path.remove(p)
        sys.modules.pop("bad_kind_x", None)
        refresh()
    assert "odd" not in schema.DTYPES


def test_a_factor_named_like_a_kinds_column_is_refused(tmp_path):
    """A design factor may not take the name of a column a registered kind declares (its levels would fill
    that column): refused at the spec, naming the factor."""
    import yaml

    from experiments.spec import SpecError

    spec = toy_spec(tmp_path, task={"kind": TOY})
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["design"]["factors"] = {"colour_margin": ["c", "o"]}
    (tmp_path / "items.csv").write_text((tmp_path / "items.csv").read_text(encoding="utf-8")
                                        .replace("colourness", "colour_margin"), encoding="utf-8")
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    with installed(TOY, tmp_path):
        with pytest.raises(SpecError, match="factor 'colour_margin' has the name of a trial-table column"):
            load_spec(spec)
