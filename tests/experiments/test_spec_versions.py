"""Sessions of two versions of a spec are never pooled silently. A different spec_hash or factor
level order across sidecars (or a row whose spec_hash is not its sidecar's) is refused naming them, unless
`--allow-spec-versions` / `allow_spec_versions=True`: then every session is coded by the current version
(the newest session's), whatever order the files are read in, and the notes name every version."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analysis import api
from analysis.load.spec_versions import SpecVersionError
from tests.project.test_shared_checks import cli
from tests.support import design_synthetic as ds


def _sessions(root: Path, n: int = 4) -> list[Path]:
    paths = ds.agreement_judgments(root, n_subjects=n, n_items=8)
    for k, p in enumerate(paths):  # started one hour apart, in file-name order
        side = p.with_suffix(".json")
        meta = json.loads(side.read_text(encoding="utf-8")) | {"spec_hash": "h", "experiment": "agreement_attraction",
                                                                "started_at": f"2026-11-20T1{k}:00:00+00:00"}
        side.write_text(json.dumps(meta), encoding="utf-8")
    return paths


def _sidecar(path: Path, **change) -> None:
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text(encoding="utf-8"))
    for k, v in change.items():
        if k == "factors":
            meta["design"]["factors"] = v
        else:
            meta[k] = v
    side.write_text(json.dumps(meta), encoding="utf-8")


def _rows(path: Path, column: str, value: str, lines: list[int]) -> None:
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for ln in lines:
        rows[ln - 2][column] = value
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def test_one_version_loads_as_before(tmp_path):
    _sessions(tmp_path)
    df = api.load_sessions(tmp_path)
    assert api.factors(df)["head_number"] == ["sg", "pl"]
    assert not df.attrs["load_info"].spec_versions


def test_opposite_level_orders_are_refused_then_coded_by_the_newest_session(tmp_path):
    paths = _sessions(tmp_path)
    flipped = {**ds.FACTORS, "head_number": ["pl", "sg"]}
    # the OLDEST session (read first: its file name sorts first) lists the levels the other way round
    _sidecar(paths[0], factors=flipped, spec_hash="h0")
    with pytest.raises(SpecVersionError, match=r"factor 'head_number' has levels \[pl, sg\] in .*S00.* but "
                                               r"\[sg, pl\] in .*S01.*--allow-spec-versions"):
        api.load_sessions(tmp_path)
    df = api.load_sessions(tmp_path, allow_spec_versions=True)
    # coded by the current version (the newest session's order), not by the first sidecar read
    assert api.factors(df)["head_number"] == ["sg", "pl"]
    notes = " ".join(df.attrs["load_info"].notes)
    assert "coded by the current version (spec_hash h" in notes and "S03" in notes and "h0" in notes
    # the newest session flipped instead: its order wins
    _sidecar(paths[0], factors=ds.FACTORS, spec_hash="h")
    _sidecar(paths[-1], factors=flipped, spec_hash="h9")
    assert api.factors(api.load_sessions(tmp_path, allow_spec_versions=True))["head_number"] == ["pl", "sg"]


def test_another_spec_hash_is_refused_and_a_row_of_another_version_is_named(tmp_path):
    paths = _sessions(tmp_path)
    _sidecar(paths[2], spec_hash="feedbeef")
    _rows(paths[2], "spec_hash", "feedbeef", list(range(2, 10)))
    with pytest.raises(SpecVersionError, match="experiment 'agreement_attraction' was run with 2 versions of its "
                                               "spec: spec_hash h .*3 session.*feedbeef .*1 session"):
        api.load_sessions(tmp_path)
    _sidecar(paths[2], spec_hash="h")
    _rows(paths[2], "spec_hash", "h", list(range(2, 10)))
    _rows(paths[1], "spec_hash", "c0ffee", [5])  # one row of another version inside a session
    with pytest.raises(SpecVersionError, match=r"S01.*1 row\(s\) carry another spec_hash than the sidecar's h "
                                               r"\(line 5: c0ffee\)"):
        api.load_sessions(tmp_path)
    df = api.load_sessions(tmp_path, allow_spec_versions=True)
    assert any("(line 5: c0ffee)" in n for n in df.attrs["load_info"].notes)


def test_analyze_refuses_them_and_the_report_names_the_versions(tmp_path):
    paths = _sessions(tmp_path / "data")
    _sidecar(paths[1], factors={**ds.FACTORS, "grammatical": ["false", "true"]}, spec_hash="v2")
    out = tmp_path / "out"
    code, said = cli("analyze", str(tmp_path / "data"), "--out", str(out), "--no-mixed", "--n-boot", "10")
    assert code == 2 and "error: sessions of different spec versions" in said, said
    assert "factor 'grammatical'" in said and "--allow-spec-versions" in said
    assert not (out / "results.json").exists()
    res = api.report(tmp_path / "data", out, n_boot=10, mixed=False, allow_spec_versions=True)
    assert "spec_hash v2" in res["spec_versions"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Sessions of different spec versions pooled" in page and "spec_hash v2" in page
