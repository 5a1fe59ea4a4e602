"""Property-based robustness: mutated specs, stimulus files, trial tables and options, through the CLI.

Whatever the input, a command ends with exit code 0 (it worked) or 2 (one clear refusal), never a
traceback (any other exception, or exit code 1), and within a bounded time. Commands run in-process
through typer's CliRunner. Example counts are bounded so the fast suite stays fast; the analysis
of mutated trial tables through `analyze` writes a whole report per accepted table, so that part is
marked slow (it is still in the default `make test` run).
"""
from __future__ import annotations

import copy
import csv
import io
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from experiments.cli import app  # noqa: E402
from experiments.spec import bundled_spec_path  # noqa: E402

RUN = CliRunner()
LIMIT_S = 15.0  # a command on a small spec takes well under a second; this only catches hangs
# TWINLAB_HUNT=N runs N times the examples with fresh random seeds (a bug hunt, not for CI)
HUNT = int(os.environ.get("TWINLAB_HUNT", "0"))
FAST = settings(max_examples=40 * max(1, HUNT), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=not HUNT, database=None)
FEW = settings(max_examples=12 * max(1, HUNT), deadline=None, suppress_health_check=[HealthCheck.too_slow],
               derandomize=not HUNT, database=None)

BASE = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8"))
BASE["blocks"][0]["trials"] = 8
BASE["blocks"][1]["trials"] = 12
BASE["stimuli"] = {"items_per_condition": 16}


def cli(*args: str, limit_s: float = LIMIT_S, codes: tuple[int, ...] = (0, 2)):
    t0 = time.monotonic()
    r = RUN.invoke(app, [str(a) for a in args])
    took = time.monotonic() - t0
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"traceback from {args}: {r.exception!r}\n{r.output[-2000:]}")
    assert r.exit_code in codes, f"exit {r.exit_code} from {args}:\n{r.output[-2000:]}"
    assert "Traceback" not in r.output, r.output[-2000:]
    assert took < limit_s, f"{args} took {took:.1f} s"
    return r


# ---- values a user might type (or a typo might make) ----------------------------------------------
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-10, max_value=50), st.sampled_from([0, -1, 10**6, 10**15, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e30, -0.5, 0.5, float("nan")]),
    st.text(max_size=12), st.sampled_from(["", " ", "space", "escape", "red", "notacolour", "PSP", "all",
                                           "long_nested", "training", "test", "\x00", "é", "1e30", "grammatical"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=6), scalars, max_size=2))


def _leaf_paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaf_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _leaf_paths(v, prefix + (i,))
    return out


# every field of the base spec, and optional fields it leaves at their defaults
PATHS = _leaf_paths(BASE) + [
    ("blocks", 0, "repetitions"), ("blocks", 1, "grammatical_weight"), ("blocks", 1, "sessions"),
    ("blocks", 1, "conditions"), ("blocks", 0, "max_consecutive_same_structure"), ("sessions",),
    ("stimuli", "seed"), ("stimuli", "generator"), ("task", "response"), ("feedback", "no_response_text"),
    ("timing", "expected_refresh_hz"), ("language",), ("blocks", 0, "design"), ("unknown_field",),
]


def _set(spec: dict, path: tuple, value: Any, delete: bool) -> None:
    x = spec
    for k in path[:-1]:
        x = x[k]
    if delete:
        if isinstance(x, dict):
            x.pop(path[-1], None)
        elif isinstance(x, list) and path[-1] < len(x):
            del x[path[-1]]
    elif isinstance(x, list) and path[-1] >= len(x):
        x.append(value)
    else:
        x[path[-1]] = value


@st.composite
def mutated_specs(draw) -> dict:
    spec = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in PATHS if _reachable(spec, p)]
        path = draw(st.sampled_from(paths))
        _set(spec, path, draw(values), delete=draw(st.booleans()) and draw(st.booleans()))
    return spec


def _reachable(spec: Any, path: tuple) -> bool:
    x = spec
    for k in path[:-1]:
        if isinstance(x, dict) and k in x:
            x = x[k]
        elif isinstance(x, list) and isinstance(k, int) and k < len(x):
            x = x[k]
        else:
            return False
    return isinstance(x, (dict, list))


def _dump(obj: Any) -> str:
    try:
        return yaml.safe_dump(obj, allow_unicode=True)
    except yaml.YAMLError:
        return yaml.safe_dump(obj)


@FAST
@given(mutated_specs())
def test_mutated_spec_fields(spec):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "spec.yaml"
        p.write_text(_dump(spec), encoding="utf-8")
        r = cli("validate", p)
        plan = cli("plan", p, "-s", "S3")
        if r.exit_code == 0 and plan.exit_code == 2:
            # validate accepted it, so plan may refuse only what depends on the subject or the order
            text = " ".join(plan.output.split())
            assert "cannot order" in text or "cannot be ordered" in text or "no stimulus items" in text, text


# ---- the spec as bytes ---------------------------------------------------------------------------
SPEC_BYTES = _dump(BASE).encode("utf-8")


@st.composite
def mutated_bytes(draw, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "truncate", "duplicate_line", "replace"]))
        pos = draw(st.integers(0, len(data)))
        if kind == "insert":
            data = data[:pos] + draw(st.binary(min_size=1, max_size=6)) + data[pos:]
        elif kind == "delete":
            data = data[:pos] + data[pos + draw(st.integers(1, 40)):]
        elif kind == "truncate":
            data = data[:pos]
        elif kind == "duplicate_line":
            lines = data.split(b"\n")
            k = draw(st.integers(0, max(0, len(lines) - 1)))
            lines.insert(k, lines[k] if lines else b"")
            data = b"\n".join(lines)
        else:
            data = data[:pos] + draw(st.sampled_from([b"\t", b":", b"- ", b"{", b"&a", b"*a",
                                                      b"!!python/object:os.system",
                                                      b"\xff", b"\xc3", b"\r", b"'", b'"'])) + data[pos + 1:]
    return data


@FAST
@given(mutated_bytes(SPEC_BYTES))
def test_mutated_spec_bytes(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "spec.yaml"
        p.write_bytes(data)
        if cli("validate", p).exit_code == 0:
            cli("plan", p, "-s", "S1")


# ---- stimulus files ----------------------------------------------------------------------------------
def _stimulus_csv() -> str:
    from stimuli.files import save_items
    from studies.lakretz2021.stimuli.generate import generate_items

    items = []
    for lex in ("test", "training"):
        for s in ("long_nested", "short_nested"):
            items += generate_items(s, lex, 3, 1)
    with tempfile.TemporaryDirectory() as d:
        return save_items(items, Path(d) / "s.csv").read_text(encoding="utf-8")


STIM = _stimulus_csv()
STIM_ROWS = list(csv.reader(io.StringIO(STIM)))


@st.composite
def mutated_stimuli(draw) -> bytes:
    rows = [r[:] for r in STIM_ROWS]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cell", "cell", "cell", "drop_cell", "add_cell", "drop_row", "dup_row", "header"]))
        i = draw(st.integers(1, len(rows) - 1))
        j = draw(st.integers(0, len(rows[0]) - 1))
        if kind == "cell" and j < len(rows[i]):
            rows[i][j] = draw(st.one_of(st.text(max_size=10), st.sampled_from(
                ["", "0", "-1", "99", "1.5", "PXP", "the", "The", "SPS", "x|", "|", "a|b", "training", "inner"])))
        elif kind == "drop_cell" and rows[i]:
            del rows[i][min(j, len(rows[i]) - 1)]
        elif kind == "add_cell":
            rows[i].append(draw(st.text(max_size=4)))
        elif kind == "drop_row" and len(rows) > 2:
            del rows[i]
        elif kind == "dup_row":
            rows.insert(i, rows[i][:])
        elif kind == "header":
            rows[0][j] = draw(st.sampled_from(["", "item", "sentence", "inner_index", "x"]))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    data = buf.getvalue().encode("utf-8")
    if draw(st.integers(0, 4)) == 0:
        data = draw(mutated_bytes(data))
    return data


@FAST
@given(mutated_stimuli())
def test_mutated_stimulus_files(data):
    with tempfile.TemporaryDirectory() as d:
        stim = Path(d) / "stim.csv"
        stim.write_bytes(data)
        spec = copy.deepcopy(BASE)
        spec["stimuli"] = {"file": "stim.csv"}
        spec["blocks"][0].update(structures=["long_nested", "short_nested"], trials=4)
        spec["blocks"][1].update(structures=["long_nested", "short_nested"], trials=4,
                                 max_consecutive_same_structure=None)
        p = Path(d) / "spec.yaml"
        p.write_text(_dump(spec), encoding="utf-8")
        if cli("validate", p).exit_code == 0:
            cli("plan", p, "-s", "S2")


# ---- options -------------------------------------------------------------------------------------
@FEW
@given(subject=st.one_of(st.text(max_size=8), st.sampled_from(["S1", "s01", "", "-", "P 1", "é1"])),
       session=st.integers(-3, 3), seed=st.one_of(st.none(), st.integers(-(2**70), 2**70)))
def test_plan_options(subject, session, seed):
    args = ["plan", bundled_spec_path("lakretz2021_nested").parent / "lakretz2021_nested.yaml", "-s", subject,
            "--session", str(session)]
    if seed is not None:
        args += ["--seed", str(seed)]
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "s.yaml"
        spec.write_text(_dump(BASE), encoding="utf-8")
        args[1] = spec
        cli(*args)


BAD_INT = st.sampled_from([-(10**9), -1, 0, 10**9])
BAD_TRIALS = st.sampled_from([-(10**9), -1, 0])  # more than the sequence holds just runs it all
MODEL_OPTS = {
    "--trials": (st.integers(1, 5), BAD_TRIALS), "--session": (st.integers(1, 3), BAD_INT),
    "--batch-size": (st.sampled_from(["8", "auto"]), st.sampled_from(["0", "-2", "x", "1e3", "999999"])),
    "--threads": (st.integers(0, 2), st.sampled_from([-1, 5000])),
    "--max-new-tokens": (st.integers(1, 8), st.sampled_from([0, -5, 10**6])),
    "--subjects": (st.integers(1, 2), st.sampled_from([0, -1, 10**6])),
    "--device": (st.sampled_from(["cpu"]), st.sampled_from(["tpu", "", "cuda:x", "gpu"])),
    "--dtype": (st.sampled_from(["float32"]), st.sampled_from(["float8", "", "int4"])),
    "--subject-prefix": (st.sampled_from(["m", "gpt"]), st.sampled_from(["", "m-", "m 1", "é"])),
    "--protocol": (st.sampled_from(["forced_choice", "direct"]),
                   st.sampled_from(["nonsense", "production:x", "sentence_judgment:x"])),
    "--context": (st.sampled_from(["none", "running"]), st.sampled_from(["fewshot:nope", "running:-1", "sometimes"])),
}


@st.composite
def model_options(draw) -> list[str]:
    """Options with at least one bad value: the run must stop before the model loads, writing nothing."""
    names = draw(st.lists(st.sampled_from(sorted(MODEL_OPTS)), min_size=1, max_size=4, unique=True))
    bad = draw(st.sampled_from(names))
    args: list[str] = []
    for n in names:
        good, wrong = MODEL_OPTS[n]
        args += [n, str(draw(wrong if n == bad else good))]
    return args


@FAST
@given(model_options())
def test_run_model_bad_options_stop_before_any_work(opts):
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "s.yaml"
        spec.write_text(_dump(BASE), encoding="utf-8")
        out = Path(d) / "out"
        cli("run-model", spec, "-o", out, *opts, codes=(2,))
        assert not out.exists(), "a refused run wrote files"


HUMAN_OPTS = {
    "--trials": (st.integers(1, 5), BAD_TRIALS), "--session": (st.integers(1, 3), BAD_INT),
    "--participant": (st.sampled_from(["P1", "autopilot2"]), st.sampled_from(["P 1", "P-1", "é", "a/b"])),
    "--autopilot-accuracy": (st.floats(0, 1), st.sampled_from([-0.1, 1.5, float("nan")])),
    "--window-size": (st.sampled_from(["800x600"]), st.sampled_from(["0x0", "800", "x", "99999x99999"])),
    "--info": (st.sampled_from(["age=31"]), st.sampled_from(["age", "height=2", "=x"])),
    "--expected-refresh-hz": (st.sampled_from([60.0]), st.sampled_from([0, -60, 1e9])),
}


@st.composite
def human_options(draw) -> list[str]:
    names = draw(st.lists(st.sampled_from(sorted(HUMAN_OPTS)), min_size=1, max_size=3, unique=True))
    bad = draw(st.sampled_from(names))
    args: list[str] = []
    for n in names:
        good, wrong = HUMAN_OPTS[n]
        v = draw(wrong if n == bad else good)
        args += [n, str(v) if not (isinstance(v, float) and math.isnan(v)) else "nan"]
    if "--participant" not in names:
        args += ["--participant", "P1"]
    return args


@FAST
@given(human_options())
def test_run_human_bad_options_stop_before_any_work(opts):
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "s.yaml"
        spec.write_text(_dump(BASE), encoding="utf-8")
        out = Path(d) / "out"
        cli("run-human", spec, "-o", out, *opts, codes=(2,))
        assert not out.exists(), "a refused run wrote files"


# ---- trial tables ------------------------------------------------------------------------------------
def _table() -> bytes:
    from experiments.design_compiler import compile_sequence
    from experiments.session import SessionWriter
    from experiments.spec import load_spec
    from participants.rows import trial_row
    from participants.rsvp import TrialResult

    exp = load_spec(bundled_spec_path("lakretz2021_nested"))
    seq = compile_sequence(exp, "P1")
    with tempfile.TemporaryDirectory() as d:
        w = SessionWriter.create(d, experiment=exp.name, subject_id="P1", session=1, subject_kind="human",
                                 spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq))
        for i in range(48):
            t = seq[i]
            ok = i % 3 != 0
            resp = t.study_record.correct_response if ok else (
                "no_violation" if t.study_record.correct_response == "violation" else "violation")
            w.append(trial_row(t, TrialResult(response=resp, correct=ok, rt_ms=400.0 + i, rt_sentence_end_ms=1.0,
                                              word_onsets_ms=[], word_durations_ms=[], feedback_shown=True,
                                              feedback_text="ok", started_at="t0", ended_at="t1", iti_onset=0.0,
                                              extra={}), seq, subject_id="P1", session=1))
        w.close()
        return w.csv_path.read_bytes()


TABLE = _table()
TABLE_ROWS = list(csv.reader(io.StringIO(TABLE.decode("utf-8"))))


@st.composite
def mutated_tables(draw) -> bytes:
    rows = [r[:] for r in TABLE_ROWS]
    cols = rows[0]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cell", "cell", "cell", "drop_rows", "dup_row", "header", "drop_col"]))
        if len(rows) < 2:  # only the header is left
            kind = "header"
        i = draw(st.integers(1, max(1, len(rows) - 1)))
        j = draw(st.integers(0, len(cols) - 1))
        if kind == "cell" and i < len(rows) and j < len(rows[i]):
            rows[i][j] = draw(st.one_of(st.text(max_size=8), st.sampled_from(
                ["", "True", "maybe", "-1", "1e309", "nan", "none", "inner", "other", "training", "human", "model",
                 "99999999999999999999", "PSP", "3.5"])))
        elif kind == "drop_rows":
            keep = draw(st.integers(0, len(rows) - 1))
            rows = rows[: keep + 1]
        elif kind == "dup_row" and i < len(rows):
            rows.insert(i, rows[i][:])
        elif kind == "header" and j < len(rows[0]):
            rows[0][j] = draw(st.sampled_from(["", "subjectid", "correct", "block"]))
        elif kind == "drop_col":
            rows = [r[:j] + r[j + 1:] for r in rows]
            cols = rows[0]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    data = buf.getvalue().encode("utf-8")
    if draw(st.integers(0, 3)) == 0:
        data = draw(mutated_bytes(data))
    return data


@FAST
@given(mutated_tables())
def test_mutated_tables_load_or_are_refused(data):
    """The loader and the shared preparation: a LoadError naming the file, or a table (fast, many examples)."""
    from analysis.load import LoadError, load
    from analysis.load.prepare import prepare
    from analysis.report.data_section import drop_training_only_sessions

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "study-x_subject-P1_session-1_data.csv"
        p.write_bytes(data)
        t0 = time.monotonic()
        try:
            df, info = load([p])
            drop_training_only_sessions(prepare(df), info)
        except LoadError as exc:
            assert str(exc).strip()
        assert time.monotonic() - t0 < LIMIT_S


@pytest.mark.slow  # an accepted table gets a whole report (figures): ~20 s each on a small shared CPU
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
          database=None)
@given(mutated_tables())
def test_mutated_tables_through_analyze(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "study-x_subject-P1_session-1_data.csv"
        p.write_bytes(data)
        cli("analyze", p, "-o", Path(d) / "out", "--no-mixed", "--n-boot", "20", limit_s=180)
