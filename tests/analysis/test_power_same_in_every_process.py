"""`twinlab power`: the same command with the same seed writes a byte-identical power_sims.csv in every process
(the layout fixed, analysis/power/layout.py; the pilot's boundary SDs simulated as 0, pilot.ROUNDING), and a
pilot SD at the boundary is named as the cause (status, notes, power.json, the figure's caption) with --sd."""
from __future__ import annotations

import hashlib
import json

import pytest

from analysis.power.report import figure_title
from analysis.power.stats import AT_THIS_SIZE, boundary_by_size, summarize
from tests.cli_refusal import twinlab
from tests.support.power_synthetic import pilot

RUNS = 6  # on main two layouts gave two tables: six runs all alike by chance has probability 1/32
FORMULA = "correct ~ cond + (1 | subject) + (1 | item)"


@pytest.mark.slow
def test_same_command_same_table_in_every_process(tmp_path, r_ready):
    pilot(tmp_path / "pilot", n_subjects=4, n_items=16, seed=5, subject_sd=0.0)  # subject SD at the boundary
    digests = set()
    for k in range(RUNS):
        out = tmp_path / f"out{k}"
        r = twinlab("power", str(tmp_path / "pilot"), "--formula", FORMULA, "--term", "cond", "--subjects", "4",
                    "--sims", "4", "--seed", "1", "--no-early-stop", "--cores", "1", "-o", str(out), timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        digests.add(hashlib.sha256((out / "tables" / "power_sims.csv").read_bytes()).hexdigest())
    assert len(digests) == 1, f"{len(digests)} distinct tables in {RUNS} runs"
    res = json.loads((out / "power.json").read_text(encoding="utf-8"))
    assert res["rules"]["layout"].startswith("fixed")
    assert "simulated as 0" in res["simulated"]["rounding"]
    sd = {r["group"]: r["estimate"] for r in res["simulated"]["random_effects"] if r["term"] == "sd__(Intercept)"}
    pilot_sd = {r["group"]: r["estimate"] for r in res["pilot"]["random_effects"] if r["term"] == "sd__(Intercept)"}
    assert 0 < pilot_sd["subject_id"] < 1e-3 and sd["subject_id"] == 0.0  # the boundary SD simulated as 0
    assert sd["item"] == pilot_sd["item"]
    cause = res["pilot"]["boundary_cause"]
    assert len(cause) == 1 and "the pilot's subject SD is" in cause[0] and "--sd subject=X" in cause[0]
    assert res["rows"][0]["notes"].startswith("pilot: the pilot's subject SD")
    assert "--sd subject=X" in r.stdout or any("--sd subject=X" in w for w in res["warnings"])
    assert "the pilot's subject SD at the boundary" in figure_title(res) and "--sd" in figure_title(res)


def _sims(boundary: int, tests: int = 10):
    import pandas as pd

    return pd.DataFrame({"failed": [False] * tests, "converged": [True] * tests, "p": [0.01] * tests,
                         "boundary": [True] * boundary + [False] * (tests - boundary),
                         "implausible_se": [False] * tests, "degenerate": [False] * tests})


def test_status_names_the_pilot_or_the_size_only_where_size_changes_it():
    cause = "the pilot's subject SD is 0.000193 (a boundary fit), simulated as 0: ...; give --sd subject=X"
    row = summarize(_sims(8), 0.05, boundary_cause=cause)
    assert "the cause is the pilot, not the study's size" in row["status"] and "--sd subject=X" in row["status"]
    assert "at this size" not in row["status"]

    def rows(*boundaries):
        return [summarize(_sims(b), 0.05) | {"subjects": 8 * (k + 1), "items": 16} for k, b in enumerate(boundaries)]

    changed = rows(8, 3)  # fewer boundary fits at 16 subjects: the size is the cause
    boundary_by_size(changed)
    assert AT_THIS_SIZE in changed[0]["status"] and "at 16 subjects x 16 items at most half" in changed[0]["status"]
    same = rows(8, 9, 8)  # as many at every larger size: not "at this size"
    boundary_by_size(same)
    assert all("at this size" not in r["status"] for r in same)
    assert "the same at every larger size simulated (up to 24 subjects x 16 items)" in same[0]["status"]
    assert "no larger size was simulated" in same[2]["status"]


def test_only_the_commands_own_process_runs_itself_again(monkeypatch):
    """A process that embeds `power` (pytest's CliRunner, a notebook) is never executed again; `twinlab power ...`,
    `python -m experiments.cli power ...` and `python -c ... power ...` are."""
    from analysis.power.layout import run_with_fixed_layout, started_as_power

    for argv, own in ((["twinlab", "power", "pilot"], True), (["-c", "power", "--seed", "1"], True),
                      (["pytest", "-q", "tests/analysis/test_power.py"], False),
                      (["pytest", "tests/x.py", "-k", "power"], False)):
        monkeypatch.setattr("sys.argv", argv)
        assert started_as_power() is own
    monkeypatch.setattr("sys.argv", ["pytest", "-q"])
    assert run_with_fixed_layout() == ""  # returns at once: nothing executed
