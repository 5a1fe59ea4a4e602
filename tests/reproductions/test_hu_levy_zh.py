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

ROOT = Path(__file__).resolve().parents[2]
REAL = next((p / "shared" / "data" / "hu_levy2023" / "chinese" for p in (ROOT.parent, ROOT.parents[1])
             if (p / "shared" / "data" / "hu_levy2023" / "chinese").is_dir()),
            ROOT.parent / "shared" / "data" / "hu_levy2023" / "chinese")


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
        "nan": {base: members[base].replace(b'"logprob_of_good_continuation": ',
                                            b'"logprob_of_good_continuation": NaN, "x": ', 1)},
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
    assert pd.read_csv(out / "tables" / "statements.csv")["holds"].astype(str).tolist() == ["True"] * 3
    comp = pd.read_csv(out / "tables" / "paper_comparison.csv")
    assert (comp["agrees_with_paper"].dropna().astype(bool).all()
            and comp["agrees_with_notebook"].dropna().astype(bool).all())
    # every text-davinci-003 prompt the authors stored equals twinlab's Chinese templates
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype=str, keep_default_na=False)
    stored = scores[(scores["prompt_source"] == "authors") & (scores["model"] == "text-davinci-003")]
    assert len(stored) == 90 * 4 + 535 * 3 + 535 * 6
    assert (stored["prompt"] == stored["context"] + stored["continuation"]).all()


def test_chinese_run_refuses_what_has_no_chinese_materials(tmp_path):
    for extra, said in ((["-e", "2"], "no Chinese materials"), (["--prompt-text", "paper"], "prints no Chinese"),
                        (["--language", "fr"], "--language"), (["--scoring", "openai-last-token"], "every token")):
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


def _zh_queries(folder: Path, n_pairs: int | None = None):
    from reproductions.hu_levy.data import load_datasets
    from reproductions.hu_levy.prompts import all_queries

    ds = load_datasets(folder, ("1", "3a", "3b"), n_items=n_pairs, seed=1, language="zh")
    return all_queries(ds, ("1", "3a", "3b"), "authors", "zh")


def test_cjk_pairs_split_where_the_context_text_ends():
    """The bundled model's byte-level BPE cuts CJK characters into byte tokens: every Chinese request's
    continuation must get whole tokens of its own, spelling it exactly, split where the context's text ends
    (the backend's rule, model_subjects/requests.py), for the fixture and, when present, the real corpora."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from model_subjects.loading import resolve_model
    from model_subjects.requests import split_pair, split_tokens

    tok = AutoTokenizer.from_pretrained(resolve_model(None).path)
    decode = lambda ids: tok.decode(list(ids), clean_up_tokenization_spaces=False)  # noqa: E731
    queries = _zh_queries(FIX)
    if (REAL / "datasets").is_dir():
        queries += _zh_queries(REAL / "datasets", n_pairs=12)
    pairs = {(q.context, q.continuation) for q in queries if q.context}
    assert any("\u4e00" <= c <= "\u9fff" for _, cont in pairs for c in cont)  # Chinese continuations among them
    for context, continuation in pairs:
        context, continuation = split_pair(context, continuation)
        enc = tok(context + continuation, add_special_tokens=False, return_offsets_mapping=True)
        whole = tuple(enc["input_ids"])
        ctx, cont = split_tokens(tuple(tok(context, add_special_tokens=False)["input_ids"]), whole, context, decode)
        assert decode(cont) == continuation and decode(ctx) == context, (context[-20:], continuation)
        by_offsets = [t for t, (a, _) in zip(whole, enc["offset_mapping"], strict=False) if a < len(context)]
        assert list(ctx) == by_offsets, (context[-20:], continuation)


@pytest.mark.model
@pytest.mark.long
def test_chinese_run_on_the_bundled_model_shows_the_chinese_prompts(tmp_path):
    out = tmp_path / "zh"
    r = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--language", "zh", "--items", "2",
                                 "--n-boot", "100", "-q", "--out", str(out)])
    assert r.exit_code == 0, r.output
    s = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"experiment": str, "item": str},
                    keep_default_na=False)
    assert set(s["experiment"]) == {"1", "3a", "3b"} and s.groupby("dataset")["item"].nunique().to_dict() == \
        {"news_zh": 2, "mandarin": 2}
    j = s[(s["experiment"] == "3a") & (s["method"] == "MetaInstruct")]
    assert set(j["continuation"]) == {"是", "否"} and set(j["option"]) == {"Yes", "No"}
    assert j["prompt"].str.startswith("你是一个善于帮助的写作助理。请告诉我以下这句话在中文里是否通顺。\n\n").all()
    assert j["context"].str.endswith(" 请用“是”或者“否”来回答。\n\n").all()
    c = s[(s["experiment"] == "3b") & (s["method"] == "MetaQuestionComplex")]
    assert c["context"].str.startswith("以下是两句话：\n\n1) ").all() and c["context"].str.endswith("答案：").all()
    w = s[(s["experiment"] == "1") & (s["method"] == "Direct")]
    assert (w["prompt"] == w["context"] + w["continuation"]).all()  # no space between prefix and gold characters
    d = s[(s["experiment"] == "3a") & (s["method"] == "Direct")]
    assert " 一 " in d["continuation"].iloc[0]  # the pairs as the authors scored them, words spaced
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["language"] == "zh" and "答案：{answer}" in prov["templates"]["word_pred:MetaQuestionComplex"]["text"]
    assert "是否通顺" in (out / "report.html").read_text(encoding="utf-8")
