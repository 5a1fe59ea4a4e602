"""Invisible and look-alike characters: text is NFC, and a hidden or control character, a
mixed-script look-alike word, or two texts of one set that differ only invisibly are refused naming the
file, the line or field, and each character by code point and name -- in a spec, a design file, a
stimulus file, a reproduction's corpus and a BLiMP pairs file. Over-long texts are refused before any
model loads. Legitimate Chinese, Italian and Persian text still validates (the bundled Mandarin and
Italian specs, the authors' Chinese corpora when ../shared has them)."""
from __future__ import annotations

import csv
import json
import shutil
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

from experiments.spec import SpecError, bundled_spec_path, load_spec
from stimuli.visible_text import hidden_chars, lookalike_problem, mixed_script_problem, text_problem, visible_key
from tests.project.test_shared_checks import cli

ZWSP, RLO, ZWJ, ZWNJ = "\u200b", "\u202e", "\u200d", "\u200c"
SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
REAL_ZH = Path("/work/shared/data/hu_levy2023/chinese/datasets")


# ---------------------------------------------------------------------------------------------- the rule
@pytest.mark.parametrize("text, named", [
    ("我有一只猫。" + ZWSP, "U+200B ZERO WIDTH SPACE (character 7)"),
    (RLO + "she reads", "U+202E RIGHT-TO-LEFT OVERRIDE (character 1)"),
    ("a\u2066b\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE (character 2), U+2069 POP DIRECTIONAL ISOLATE (character 4)"),
    ("red\x1b[31m", "U+001B ESCAPE (character 4)"),
    ("ding\x07", "U+0007 BELL (character 5)"),
    ("two\u2028lines", "U+2028 LINE SEPARATOR (character 4)"),
    ("我" + ZWJ + "猫", "U+200D ZERO WIDTH JOINER (character 2)"),  # no joiner between Chinese characters
    ("\ufeffstart", "U+FEFF ZERO WIDTH NO-BREAK SPACE (character 1)"),
    ("soft\u00adhyphen", "U+00AD SOFT HYPHEN (character 5)"),
])
def test_hidden_and_control_characters_are_named_by_code_point_and_name(text, named):
    problem = text_problem(text)
    assert problem is not None and named in problem, problem


@pytest.mark.parametrize("text", [
    "我买了一本书。", "他 养 了 一 匹 马 。", "韓網熱帖／FIFTY FIFTY控公司\n「丟食物侮辱」！\t誇張",
    "il cuoco che la maestra aiuta chiama i vicini", "perché è così", "naïve café",
    "می" + ZWNJ + "خواهم",  # Persian needs its zero-width non-joiner inside a word
    "β-blocker and αβγ", "Москва and London", "ACCEPTABLE", "1.5 ms",
])
def test_legitimate_text_passes(text):
    assert text_problem(text) is None
    assert hidden_chars(text) == []


def test_a_word_mixing_latin_with_a_cyrillic_look_alike_is_named():
    problem = mixed_script_problem("the p\u0430st tense")  # Cyrillic а in a Latin word
    assert problem == ("the word 'p\u0430st' mixes Latin letters with Cyrillic look-alikes: "
                       "U+0430 CYRILLIC SMALL LETTER A")
    assert "U+03BF GREEK SMALL LETTER OMICRON" in mixed_script_problem("l\u03bfng")


def test_look_alike_texts_of_one_set_are_named_with_what_tells_them_apart():
    assert visible_key("ｓｇ") == visible_key("sg" + ZWSP) == visible_key(" sg ") == "sg"
    assert "U+200B ZERO WIDTH SPACE" in lookalike_problem(["sg", "pl", "sg" + ZWSP], "levels")
    assert "'sg' and 'ｓｇ' look the same" in lookalike_problem(["sg", "ｓｇ"], "levels")
    assert "U+0020 SPACE" in lookalike_problem(["我有一只猫。", "我有一只猫。 "], "pair")
    assert lookalike_problem(["sg", "pl", "sg"], "levels") is None  # the same text twice is another rule's


# ---------------------------------------------------------------------------------------------- specs
def _spec(tmp_path: Path, name: str = "agreement_attraction", edit=None) -> Path:
    for f in SPECS.glob(f"{name}*"):
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / f"{name}.yaml"
    if edit:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        edit(data)
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _levels(levels):
    return lambda d: d["design"]["factors"].__setitem__("head_number", levels)


@pytest.mark.parametrize("edit, said", [
    (_levels(["sg", "p\u0430"]), "design.factors.head_number.1: 'pа' the word 'pа' mixes Latin letters with "
                                 "Cyrillic look-alikes: U+0430 CYRILLIC SMALL LETTER A"),
    (_levels(["sg", "sg" + ZWSP]), "design.factors.head_number.1: 'sg\\u200b' holds invisible or control "
                                   "character(s) U+200B ZERO WIDTH SPACE (character 3)"),
    (_levels(["sg", "ｓｇ"]), "design.factors.head_number: two entries, 'sg' and 'ｓｇ' look the same"),
    (lambda d: d["task"]["panel"]["labels"].__setitem__("no_violation", "UNACCEPTABLE "),
     "task.panel.labels: two entries, 'UNACCEPTABLE' and 'UNACCEPTABLE ' look the same (they differ only by "
     "U+0020 SPACE)"),
    (lambda d: d["task"]["panel"].__setitem__("question", RLO + "Was the sentence acceptable?"),
     "task.panel.question: '\\u202eWas the sentence acceptable?' holds invisible or control character(s) "
     "U+202E RIGHT-TO-LEFT OVERRIDE"),
    (lambda d: d["blocks"][1].__setitem__("intro_text", "长" * 200_000),
     "blocks.1.intro_text: 200,000 characters; a text of a spec has at most 20,000"),
    (lambda d: d.__setitem__("name", b"hello"), "name: a binary value (!!binary)"),
])
def test_a_spec_with_hidden_or_look_alike_text_is_refused_naming_the_field(tmp_path, edit, said):
    path = _spec(tmp_path, edit=edit)
    code, text = cli("validate", str(path))
    assert code == 2 and f"{path}: {said}" in text, text
    with pytest.raises(SpecError):
        load_spec(path)


def test_spec_text_is_made_nfc_and_hashes_as_the_nfc_spec(tmp_path):
    nfd = unicodedata.normalize("NFD", "Adesso comincia la parte principale, perché è così.")
    nfc = unicodedata.normalize("NFC", nfd)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = load_spec(_spec(tmp_path / "a", edit=lambda d: d["blocks"][1].__setitem__("intro_text", nfd)))
    b = load_spec(_spec(tmp_path / "b", edit=lambda d: d["blocks"][1].__setitem__("intro_text", nfc)))
    assert nfd != nfc and a.blocks[1].intro_text == nfc and a.spec_hash == b.spec_hash


@pytest.mark.parametrize("name", ["hu_levy2023_mandarin_2afc", "lakretz2021_italian_example", "agreement_attraction"])
def test_the_bundled_mandarin_and_italian_specs_still_validate(name):
    exp = load_spec(bundled_spec_path(name))
    assert exp.name == name


# ---------------------------------------------------------------------------------------------- items
def _mandarin(tmp_path: Path, line: int, column: str, value) -> Path:
    path = _spec(tmp_path, "hu_levy2023_mandarin_2afc")
    items = path.with_name("hu_levy2023_mandarin_2afc_items.csv")
    rows = list(csv.DictReader(items.open(encoding="utf-8")))
    rows[line - 2][column] = value(rows[line - 2])
    with open(items, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.mark.parametrize("column, value, said", [
    ("option_2", lambda r: r["option_1"] + ZWSP,
     "line 4, column 5 (option_2): holds invisible or control character(s) U+200B ZERO WIDTH SPACE (character 8)"),
    ("option_1", lambda r: RLO + r["option_1"], "line 4, column 4 (option_1): holds invisible or control "
                                                "character(s) U+202E RIGHT-TO-LEFT OVERRIDE (character 1)"),
    ("option_2", lambda r: r["option_1"] + " ", "line 4: options: two options are the same text"),
])
def test_mandarin_options_that_differ_only_invisibly_are_no_choice(tmp_path, column, value, said):
    path = _mandarin(tmp_path, 4, column, value)
    code, text = cli("validate", str(path))
    assert code == 2 and "hu_levy2023_mandarin_2afc_items.csv: " in text and said in text, text


def test_an_item_whose_pair_reads_the_same_is_refused():
    from experiments.tasks import TaskError
    from experiments.tasks.items import lookalike_materials

    with pytest.raises(TaskError, match="items.csv: line 3: sentence and pair_sentence: 'The keys are lost.' and "
                                        "'The keys are lost．' look the same .*a minimal pair must differ"):
        lookalike_materials({"sentence": "The keys are lost.", "pair_sentence": "The keys are lost．"},
                            "items.csv: line 3")
    with pytest.raises(TaskError, match="options: 'yes' and 'ｙｅｓ' look the same"):
        lookalike_materials({"options": ("yes", "ｙｅｓ", "no")}, "x")
    lookalike_materials({"sentence": "The keys are lost.", "pair_sentence": "The keys is lost."}, "x")


def test_a_stimulus_file_row_with_a_hidden_character_is_named(tmp_path):
    from stimuli.files import StimulusFileError, load_items

    src = Path(__file__).resolve().parents[2] / "stimuli" / "examples" / "lakretz2021_italian_example.tsv"
    lines = src.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("il medico", "il med" + ZWSP + "ico")
    bad = tmp_path / "items.tsv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(StimulusFileError, match=r"line 3: column sentence: holds invisible or control character\(s\) "
                                                r"U\+200B ZERO WIDTH SPACE"):
        load_items(bad)
    assert len(load_items(src)) == len(lines) - 1  # the example itself reads whole


# ---------------------------------------------------------------------------------------------- corpora
def _corpus(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "corpus.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


MANDARIN = [{"good_sentence": "我 很 喜欢 一 位 国内 的 明星 。", "bad_sentence": "我 很 喜欢 一 首 国内 的 明星 。",
             "suite": "cls_adj", "item_id": "1"},
            {"good_sentence": "他 养 了 一 匹 马 。", "bad_sentence": "他 养 了 一 本 马 。", "suite": "cls_adj",
             "item_id": "2"}]


@pytest.mark.parametrize("bad, said", [
    ("他 养 了 一 匹 马 。" + ZWSP, "line 3: bad_sentence: holds invisible or control character(s) U+200B ZERO WIDTH "
                                 "SPACE (character 14)"),
    ("他 养 了 一 匹 马 。 ",
     "line 3: good_sentence and bad_sentence: '他 养 了 一 匹 马 。' and '他 养 了 一 匹 马 。 ' "
     "look the same (they differ only by U+0020 SPACE)"),
])
def test_mandarin_pairs_that_differ_only_invisibly_are_not_scored_as_minimal_pairs(tmp_path, bad, said):
    from reproductions.hu_levy.data import DATASETS_ZH, DataError, read_corpus

    spec = next(s for s in DATASETS_ZH if s.name == "mandarin")
    items, _, _ = read_corpus(spec, _corpus(tmp_path, MANDARIN))
    assert [i.item_id for i in items] == ["1", "2"]
    with pytest.raises(DataError, match="1 bad row") as err:
        read_corpus(spec, _corpus(tmp_path, [MANDARIN[0], {**MANDARIN[1], "bad_sentence": bad}]))
    assert said in " ".join(str(err.value).split())


def test_a_200000_character_chinese_prefix_is_refused_before_any_model_loads(tmp_path):
    from reproductions.hu_levy.data import DATASETS_ZH, DataError, read_corpus

    spec = next(s for s in DATASETS_ZH if s.name == "news_zh")
    rows = [{"item_id": "1", "prefix": "新闻" * 100_000, "continuation": "。"},
            {"item_id": "2", "prefix": "今天天气很好", "continuation": "。"}]
    loaded = "torch" in sys.modules
    with pytest.raises(DataError, match="line 2: item 1: 200001 characters; a model subject reads at most 20000 "
                                        "characters per item"):
        read_corpus(spec, _corpus(tmp_path, rows))
    assert loaded or "torch" not in sys.modules


@pytest.mark.skipif(not REAL_ZH.is_dir(), reason="the authors' Chinese datasets (../shared) are not here")
def test_the_authors_chinese_corpora_still_read_whole():
    from reproductions.hu_levy.data import DATASETS_ZH, read_corpus

    for spec in DATASETS_ZH:
        items, _, _ = read_corpus(spec, REAL_ZH / spec.path)
        assert len(items) == {"news_zh": 90, "mandarin": 535}[spec.name]


def test_a_blimp_pair_that_differs_only_by_a_zero_width_space_is_refused(tmp_path):
    from reproductions.common import ReproError
    from reproductions.pairs import load_blimp_jsonl

    path = tmp_path / "pairs.jsonl"
    good = {"sentence_good": "The keys are lost.", "sentence_bad": "The keys is lost.", "UID": "agr"}
    bad = {"sentence_good": "The keys are lost.", "sentence_bad": "The keys are lost." + ZWSP, "UID": "agr"}
    path.write_text("\n".join(json.dumps(x) for x in (good, bad)) + "\n", encoding="utf-8")
    with pytest.raises(ReproError, match=r"line 2: sentence_bad: holds invisible or control character\(s\) U\+200B"):
        load_blimp_jsonl(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert [p.bad for p in load_blimp_jsonl(path)] == ["The keys is lost."]
