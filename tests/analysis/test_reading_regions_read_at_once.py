"""People who read a sentence region by region (PennController's DashedSentence in chunks: one press shows a
region, so the file has a time per region and none per word) reach `analyze`: the report's people's reading time
by region equals a hand count of the results file (read here line by line, not through the reader), and the
`rt_range` rule counts the regions it removes (never "0 word(s) removed" when no word was read alone).

The sessions are made by the real CLI (`twinlab import pcibex`) from a results file in PennController's layout
(the held-out KoheiHaneda/WSS_EN_SPR study's: tests/imports/test_import_kinds.py `penn_spr_file`), two submissions."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = {"a": ["Noah", "was leaving", "early."], "b": ["Noah", "left", "early."]}
COLS = ["Results reception time", "MD5 hash of participant's IP address", "Controller name", "Order number of item",
        "Inner element number", "Label", "Latin.Square.Group", "PennElementType", "PennElementName", "Parameter",
        "Value", "EventTime", "item_id", "condition", "Reading time", "Newline?", "Sentence (or sentence MD5)",
        "Comments"]
# (person, item, chunk) -> a time outside [100, 5000] ms: the rt_range rule removes these regions
OUTSIDE = {("49f6bed4", "i2", 2): 6200, ("77aa01c3", "i3", 0): 60}
MAP = ("task: self_paced_reading\nresponse: rating\nitem: item_id\ncondition: condition\n"
       "labels: {F: \"yes\", J: \"no\"}\n")


def results_file(tmp_path: Path) -> Path:
    """Two submissions; each reads four items (two per condition) in chunks, then presses a key."""
    head = "# Columns below this comment are as follows:\n" + "".join(f"# {i}. {c}.\n" for i, c in enumerate(COLS, 1))
    text = ""
    for s, (md5, when) in enumerate([("49f6bed4", 1737733243), ("77aa01c3", 1737740000)]):
        text += f"#\n# Results on Monday January 27 2025.\n#\n{head}"
        for n, (item, cond) in enumerate([("i1", "a"), ("i2", "b"), ("i3", "a"), ("i4", "b")]):
            p = f"{when},{md5},PennController,{n + 3},0,experiment,NULL"
            text += f"{p},PennController,{n},_Trial_,Start,1000,{item},{cond},NULL,NULL,NULL,NULL\n"
            for w, chunk in enumerate(CHUNKS[cond]):
                rt = OUTSIDE.get((md5, item, w), 280 + 37 * n + 13 * w + 71 * s)
                text += (f"{p},Controller-DashedSentence,DashedSentence,{w + 1},{chunk},1001,{item},{cond},"
                         f"{rt},false,{' '.join(CHUNKS[cond])},NULL\n")
            text += f"{p},Key,rating,PressedKey,{'FJ'[n % 2]},2500,{item},{cond},NULL,NULL,NULL,NULL\n"
            text += f"{p},PennController,{n},_Trial_,End,2600,{item},{cond},NULL,NULL,NULL,NULL\n"
    path = tmp_path / "results"
    path.write_text(text, encoding="utf-8")
    return path


def hand_count(path: Path) -> tuple[dict[tuple[str, str], float], int]:
    """(condition, region number) -> the mean over people of each person's mean region time (times in [100, 5000]
    only), and how many region times fall outside; read from the file's lines with the csv module."""
    times: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    outside = 0
    with open(path, encoding="utf-8", newline="") as fh:
        for v in csv.reader(line for line in fh if not line.startswith("#")):
            if v[7] != "Controller-DashedSentence":
                continue
            rt = float(v[14])
            if 100 <= rt <= 5000:
                times[(v[1], v[13], v[9])].append(rt)
            else:
                outside += 1
    per_person: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (_, cond, region), rts in times.items():
        per_person[(cond, region)].append(mean(rts))
    return {k: mean(v) for k, v in per_person.items()}, outside


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_region_reading_times_of_an_imported_chunked_study_equal_a_hand_count(tmp_path):
    path = results_file(tmp_path)
    (tmp_path / "map.yaml").write_text(MAP, encoding="utf-8")
    r = cli("import", "pcibex", str(path), "--map", "map.yaml", "--out", "sessions", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cli("analyze", "sessions", "--out", "report", "--no-mixed", "--n-boot", "50", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    want, outside = hand_count(path)
    assert outside == 2 and len(want) == 6
    with open(tmp_path / "report" / "tables" / "reading_region_means.csv", encoding="utf-8", newline="") as fh:
        got = {(row["condition"], row["region"]): row for row in csv.DictReader(fh) if row["group"] == "human"}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert float(got[key]["mean_rt_ms"]) == pytest.approx(value, abs=1e-9)
        assert got[key]["n_subjects"] == "2"
    assert got[("a", "2")]["region_name"] == "R2 (was leaving)"   # a region of two words, read at once
    results = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    text = next(s["text"] for s in results["sections"] if s["id"] == "task_reading")
    assert "(2 region(s) read at once removed)" in text and "word(s) removed" not in text
    assert not (tmp_path / "report" / "tables" / "reading_word_means.csv").exists()   # no word has its own time


def test_region_times_through_the_api_rules_and_the_range_check(tmp_path):
    """The same rows through the API: the rules' counts name regions, and a --word-rt-range that leaves out every
    time counts the region times (the check before any work reads `region_rts_ms` too)."""
    from analysis import api
    from analysis.measures.reading import ReadingRules, kept_word_times

    path = results_file(tmp_path)
    (tmp_path / "map.yaml").write_text(MAP, encoding="utf-8")
    assert cli("import", "pcibex", str(path), "--map", "map.yaml", "--out", "sessions", cwd=tmp_path).returncode == 0
    df = api.load_sessions([tmp_path / "sessions"])
    rules = api.reading_times(df, n_boot=20)["rules"].set_index("rule")
    assert (rules.loc["rt_range", "words_removed"], rules.loc["rt_range", "regions_removed"]) == (0, 2)
    regions = api.reading_regions(df)
    people = regions[regions["subject_kind"] == "human"]
    assert len(people) == 8 * 3 - 2 and people["region_rt_ms"].notna().all()   # the two trimmed regions are gone
    n, kept, low, high = kept_word_times(df, ReadingRules())
    assert (n, kept, low, high) == (24, 22, 60.0, 6200.0)


@pytest.mark.slow
def test_the_reading_twin_on_regions_read_at_once(tmp_path):
    """The twins' ΔLL rows of people who read region by region: per trial and region, the file's region time
    beside the model's surprisal of the region (the sum of its words' surprisals in the model's own session), the
    previous region's beside it; the report's ΔLL table says its unit is the region."""
    from analysis import api
    from analysis.twins.reading_dll import joined_words

    path = results_file(tmp_path)
    (tmp_path / "map.yaml").write_text(MAP, encoding="utf-8")
    assert cli("import", "pcibex", str(path), "--map", "map.yaml", "--out", "sessions", "--spec-out", "spr.yaml",
               cwd=tmp_path).returncode == 0
    r = cli("run-model", "spr.yaml", "--protocol", "surprisal", "--out", "models", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    surprisal = {}   # (item, chunk index) -> the model's bits summed over the chunk's words
    for f in (tmp_path / "models" / "data").glob("*_data.csv"):
        with open(f, encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                bits, k = json.loads(row["word_surprisal_bits"]), 0
                for c, chunk in enumerate(CHUNKS[row["condition"]]):
                    n = len(chunk.split())
                    surprisal[(row["item"], c)] = sum(bits[k:k + n])
                    k += n
    times = {}   # (person, item, chunk index) -> the file's time
    with open(path, encoding="utf-8", newline="") as fh:
        for v in csv.reader(line for line in fh if not line.startswith("#")):
            if v[7] == "Controller-DashedSentence":
                times[(v[1], v[12], int(v[9]) - 1)] = float(v[14])
    df = api.load_sessions([tmp_path / "sessions", tmp_path / "models"])
    joined = joined_words(df, {"condition": ["a", "b"]})
    assert len(joined) == 1
    j = next(iter(joined.values()))
    assert j.attrs["unit"] == "region"
    kept = {k: t for k, t in times.items() if 100 <= t <= 5000}
    assert len(j) == len(kept) == 22
    for _, row in j.iterrows():
        person, item, c = str(row["subject_id"]).split(":")[-1][:8], str(row["item"]), int(row["region"]) - 1
        assert row["word_rt_ms"] == kept[(person, item, c)]
        assert row["surprisal"] == pytest.approx(surprisal[(item, c)], abs=1e-5)
        prev = (person, item, c - 1)
        if c and prev in kept:
            assert row["surprisal_prev1"] == pytest.approx(surprisal[(item, c - 1)], abs=1e-5)
            assert row["length_prev1"] == len("".join(ch for ch in CHUNKS["ab"[int(item[1]) % 2 == 0]][c - 1]
                                                      if ch.isalnum()))
        else:
            assert np.isnan(row["surprisal_prev1"]) and np.isnan(row["length_prev1"])
    r = cli("analyze", "sessions", "models", "--out", "report", "--no-mixed", "--n-boot", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "report" / "tables" / "twins_delta_ll.csv", encoding="utf-8", newline="") as fh:
        dll = list(csv.DictReader(fh))
    assert {x["unit"] for x in dll} == {"region"} and {x["folds_by"] for x in dll} == {"people", "items"}
    assert all(x["words"] == "14" for x in dll)   # 22 regions, less the 8 first regions and one after a trimmed one
    points = next((tmp_path / "report" / "tables").glob("surprisal_rt_*.csv"))
    with open(points, encoding="utf-8", newline="") as fh:
        per_region = {(x["item"], x["position"]): x for x in csv.DictReader(fh)}
    assert len(per_region) == 12 and per_region[("i1", "2")]["word"] == "was leaving"
    for (item, region), x in per_region.items():   # the people's mean time of the region, beside its surprisal
        mine = [t for (_, it, c), t in kept.items() if it == item and c == int(region) - 1]
        assert float(x["mean_rt_ms"]) == pytest.approx(mean(mine))
        assert float(x["surprisal_bits"]) == pytest.approx(surprisal[(item, int(region) - 1)], abs=1e-5)
