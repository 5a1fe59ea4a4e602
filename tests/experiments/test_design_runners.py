"""A design of items through the runners: the browser runner's server (no browser) and the model
runner (the bundled model) write the generic table with the design's factor columns, its list and
the sidecar's design record, for agreement_attraction (violation detection on a panel)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from experiments.design_compiler import compile_sequence
from experiments.schema import GENERAL_COLUMN_NAMES, added_columns
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec

HEADER = GENERAL_COLUMN_NAMES + added_columns(["violation_detection"]) + ["head_number", "attractor_number"]


def test_browser_server_writes_the_design_table(tmp_path):
    from starlette.testclient import TestClient

    from participants.web.server import create_app
    try:
        from tests.web_support import page_report
    except ModuleNotFoundError:  # pragma: no cover
        from web_support import page_report
    from participants.web.site import SiteError

    exp = load_spec("agreement_attraction")
    out = tmp_path / "data"
    try:
        app = create_app(exp, out)
    except SiteError as exc:  # the jsPsych files come with scripts/setup.sh (npm ci)
        pytest.skip(str(exc))
    seq = compile_sequence(exp, "P06", list_number=1)  # web serve: the least-filled list (all empty: list 1)
    with TestClient(app, base_url="http://127.0.0.1") as client:  # the server answers for addresses only
        s = client.post("/api/start", json={"participant": "P06", "session": 1, "token": None, "info": {},
                                            "client": {"refresh": {"hz": 60.0}}}).json()
        assert s["status"] == "run" and s["sequence_hash"] == seq.sequence_hash
        for i in range(10):  # the 8 practice trials and 2 test trials, answered right
            r = client.post("/api/trial", json={"participant": "P06", "session": 1, "token": s["token"],
                                                "result": page_report(seq[i], exp,
                                                                      answer=seq[i].study_record.correct_response,
                                                                      by="key")})
            assert r.status_code == 200, r.text
    csv_path, json_path = session_paths(out, exp.name, "P06", 1)
    assert csv_path.read_text(encoding="utf-8").splitlines()[0].split(",") == HEADER
    rows = read_rows(csv_path)
    assert [r["correct"] for r in rows] == ["True"] * 10
    assert {r["list"] for r in rows} == {"1"} and [r["role"] for r in rows] == ["practice"] * 8 + ["test"] * 2
    for i, row in enumerate(rows):  # the design's columns are the compiler's
        t = seq[i]
        assert row["item"] == t.item and row["head_number"] == t.factor_levels.get("head_number", "")
    meta = json.loads(json_path.read_text())
    assert meta["design"]["list"] == 1 and meta["list_assignment"]["method"] == "least_filled"


@pytest.mark.model
@pytest.mark.slow
def test_model_subjects_run_the_design_with_running_context(tmp_path):
    pytest.importorskip("torch")
    from model_subjects.backends.registry import load_backend
    from model_subjects.runner import RunConfig, Runner

    backend = load_backend(None, threads=1)
    exp = load_spec("agreement_attraction")
    Runner(RunConfig(spec="agreement_attraction", out=tmp_path, subjects=2, context="running", trials=12),
           backend).run()
    lists = []
    for sid in ("m01", "m02"):
        csv_path, json_path = session_paths(tmp_path, exp.name, sid, 1)
        assert csv_path.read_text(encoding="utf-8").splitlines()[0].split(",") == HEADER
        rows = read_rows(csv_path)
        seq = compile_sequence(exp, sid)
        assert len(rows) == 12 and [r["item_id"] for r in rows] == [t.item_id for t in seq.trials[:12]]
        for r in rows:
            lp = json.loads(r["option_logprobs"])  # [violation label, no_violation label]
            want = "violation" if lp[0] > lp[1] else "no_violation"
            assert r["response"] == want and r["correct"] == str(want == r["correct_response"])
        side = json.loads(json_path.read_text())
        lists.append(side["design"]["list"])
        test = [r for r in rows if r["role"] == "test"]
        assert Counter(r["list"] for r in test) == {str(lists[-1]): 4}
    assert lists == [1, 2]
