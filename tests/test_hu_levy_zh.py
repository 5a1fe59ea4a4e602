"""Appendix D (Mandarin Chinese, Figure 11): the authors' outputs recomputed, their archive read
safely, and the Chinese prompts as the authors' code wrote them.

Figure 11's numbers are checked against an independent computation straight from the JSON files
(tests/support/hu_levy_zh_archive.py: zipfile + json, none of twinlab's code): on a synthetic
archive in the release's format here, and on the real results_zh.zip when ../shared has it.
"""
from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from experiments.cli import app
from reproductions.hu_levy.archive import ArchiveError
from reproductions.hu_levy.authors_zh import AuthorsZhOptions, read_outputs, reproduce_authors_zh
from tests.support.hu_levy_zh_archive import FIX, build_archive, independent, write_zip

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "hu_levy2023" / "chinese"


def _ours(out: Path) -> dict[tuple[str, str, str], float]:
    perf = pd.read_csv(out / "tables" / "performance.csv", dtype={"experiment": str})
    perf = perf[perf["dataset"] == "all"]
    return {(r.model, r.experiment, r.method): r.estimate for r in perf.itertuples()}


def _same(ours: dict, ref: dict) -> None:
    assert set(ours) == set(ref)
    for k in ref:
        assert round(ours[k], 3) == round(ref[k], 3), k


def test_synthetic_archive_gives_the_independent_numbers_and_refuses_tampering(tmp_path):
    zpath = tmp_path / "results_zh.zip"
    members = build_archive(zpath, seed=4, models=("text-davinci-003", "text-curie-001"))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--authors-outputs", str(zpath), "--out", str(out),
                                   "--n-boot", "100", "-q"])
    assert res.exit_code == 0, res.output
    ref = independent(zpath)
    assert len(ref) == 4 + 4 + 4 + 4  # Exp 1 x 2 models, 3a, 3b
    _same(_ours(out), ref)
    assert (out / "figures" / "figure11.png").stat().st_size > 10_000
    cp = pd.read_csv(out / "tables" / "checkpoints.csv")
    assert cp["compared"].tolist() == ["identical records"]
    # tampering: each refused with exit 2 naming the member, and nothing written
    base = "results_zh/exp3b_sentence-comparison/mandarin_text-davinci-003_metaInstruct_badFirst.json"
    doc = json.loads(members[base])
    cases = {
        "nan": {base: members[base].replace(b'"logprob_of_good_continuation": ', b'"logprob_of_good_continuation": NaN, "x": ', 1)},
        "renamed": {base.replace("badFirst", "goodFirst"): members[base], base: None},
        "missing_order": {base: None},
        "pickle": {"results_zh/exp1_word-prediction/evil.pkl": b"\x80\x04N."},
        "escape": {"../evil.json": b"{}"},
        "other_pairs": {base: json.dumps({**doc, "results": [{**doc["results"][0], "bad_sentence": "我 买 了 书 。"}]
                                          + doc["results"][1:]}, ensure_ascii=False).encode()},
    }
    for name, change in cases.items():
        bad = {k: v for k, v in {**members, **change}.items() if v is not None}
        bad_zip = tmp_path / f"{name}.zip"
        write_zip(bad_zip, bad)
        dest = tmp_path / f"never_{name}"
        r = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--authors-outputs", str(bad_zip), "--out", str(dest)])
        assert r.exit_code == 2, (name, r.output)
        assert "Traceback" not in r.output and not dest.exists(), name
        named = {"pickle": "evil.pkl", "escape": "../evil.json", "renamed": "goodFirst",
                 "missing_order": "MetaInstruct badFirst"}.get(name, base)
        assert named in r.output, (name, r.output)


def test_a_corrupted_member_is_refused_by_its_checksum(tmp_path):
    zpath = tmp_path / "r.zip"
    build_archive(zpath)
    raw = bytearray(zpath.read_bytes())
    with zipfile.ZipFile(zpath) as zf:  # flip one byte inside a stored copy of a member's data
        info = zf.getinfo("results_zh/exp1_word-prediction/news_zh_text-davinci-003_direct.json")
    stored = tmp_path / "stored.zip"
    with zipfile.ZipFile(zpath) as zf, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as out:
        for i in zf.infolist():
            out.writestr(i.filename, zf.read(i.filename))
    raw = bytearray(stored.read_bytes())
    k = raw.index(b"logprob_of_gold_continuation") + 40
    raw[k] = ord("7") if raw[k] != ord("7") else ord("8")
    stored.write_bytes(bytes(raw))
    with pytest.raises(ArchiveError, match="news_zh_text-davinci-003_direct.json|not a readable zip") as exc:
        read_outputs(stored)
    assert info.filename.split("/")[-1] in str(exc.value)


@pytest.mark.skipif(not (REAL / "results_zh.zip").is_file(), reason="../shared/data/hu_levy2023/chinese absent")
def test_real_archive_figure11_numbers_and_the_authors_prompts(tmp_path):
    zpath = REAL / "results_zh.zip"
    out = reproduce_authors_zh(AuthorsZhOptions(zpath, tmp_path / "out", n_boot=100)).parent
    ref = independent(zpath)
    _same(_ours(out), ref)
    d = {k[1:]: v for k, v in ref.items() if k[0] == "text-davinci-003"}
    # the notebook's printed means (analysis_zh.ipynb) and the paper's "Direct 0.6; others 0.8"
    assert round(d[("1", "Direct")], 6) == -3.346442 and round(d[("3b", "MetaInstruct")], 6) == 0.823364
    assert round(d[("3b", "Direct")], 1) == 0.6 and all(round(d[("3b", m)], 1) == 0.8 for m in
                                                         ("MetaQuestionSimple", "MetaInstruct", "MetaQuestionComplex"))
    comp = pd.read_csv(out / "tables" / "paper_comparison.csv")
    assert comp["agrees_with_paper"].dropna().astype(bool).all() and comp["agrees_with_notebook"].dropna().astype(bool).all()
    # every text-davinci-003 prompt the authors stored equals twinlab's Chinese templates
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype=str, keep_default_na=False)
    stored = scores[(scores["prompt_source"] == "authors") & (scores["model"] == "text-davinci-003")]
    assert len(stored) == 90 * 4 + 535 * 3 + 535 * 6
    assert (stored["prompt"] == stored["context"] + stored["continuation"]).all()


def test_chinese_run_refuses_what_has_no_chinese_materials(tmp_path):
    for extra, said in ((["-e", "2"], "no Chinese materials"), (["--prompt-text", "paper"], "prints no Chinese"),
                        (["--language", "fr"], "--language")):
        r = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--language", "zh",
                                     "--out", str(tmp_path / "x"), *extra])
        assert r.exit_code == 2 and said in r.output, r.output
        assert not (tmp_path / "x").exists()


def test_fixture_corpora_keep_the_line_breaks_of_a_news_prefix():
    from reproductions.hu_levy.data import load_datasets

    ds = {d.spec.name: d for d in load_datasets(FIX, ("1", "3a", "3b"), language="zh")}
    with open(FIX / "exp1/news_zh/corpus.csv", encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh))
    assert ds["news_zh"].items[0].prefix == first["prefix"] and "\n\n" in first["prefix"]
    assert ds["mandarin"].items[0].good_sentence == "我 买 了 一 本 书 。"
