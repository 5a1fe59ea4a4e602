"""One compiler: a Lakretz spec and a design-file spec go through the same path
(pool -> balanced sample -> the source's order -> trials), the order strategies are the ones the
recorded sessions were made with (a pinned sequence of a block that needs the guided search), and the
shared pieces (counting bound, run check, balanced sample) against hand counts."""
from __future__ import annotations

import random
from collections import Counter

import yaml

from experiments import design_compiler
from experiments.design_compiler import compile_sequence
from experiments.sources.orders import excess, runs_ok
from experiments.spec import bundled_spec_path, load_spec, parse_spec
from studies.lakretz2021 import order as lakretz_order


def _spy(monkeypatch, module, name, calls):
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append((name, args, out))
        return out
    monkeypatch.setattr(module, name, wrapped)


def test_a_lakretz_and_a_design_spec_take_the_same_path(monkeypatch):
    for spec, sampled in (("lakretz2021_demo", 40), ("agreement_attraction", None)):
        calls: list = []
        _spy(monkeypatch, design_compiler, "_block_parts", calls)
        _spy(monkeypatch, design_compiler, "balanced_sample", calls)
        exp = load_spec(bundled_spec_path(spec))
        seq = compile_sequence(exp, "S01")
        parts = [c for c in calls if c[0] == "_block_parts"]
        assert [c[1][2].name for c in parts] == [b.name for b in exp.blocks], spec
        # every trial of the sequence came out of the one path's parts, in order
        assert sum(len(p) for c in parts for p in c[2]) == len(seq.trials)
        samples = [c for c in calls if c[0] == "balanced_sample"]
        assert [len(c[2]) for c in samples] == ([sampled] if sampled else []), spec
        monkeypatch.undo()


def test_a_lakretz_block_ordered_by_the_guided_search_keeps_its_sequence(monkeypatch):
    """Recorded with the Lakretz compiler before the merge (its own greedy, then `_guided_shuffle`)."""
    d = yaml.safe_load(bundled_spec_path("lakretz2021_demo").read_text())
    d["blocks"][1].update({"structures": ["long_nested", "short_nested"], "repetitions": 10,
                           "max_consecutive_violations": 2, "max_consecutive_same_structure": 3})
    calls: list = []
    _spy(monkeypatch, lakretz_order, "guided_order", calls)
    seq = compile_sequence(parse_spec(d), "S07")
    assert calls, "the plain greedy finished: this spec no longer pins the guided search"
    assert (len(seq.trials), seq.sequence_hash) == (400, "267b95b2412c5dd0")


def test_the_counting_bound_by_hand():
    units = list("xxxxxyy")  # 5 x among 7: in a row at most lim, so 5 <= lim * (2 + 1) is needed
    value = lambda u, key: u  # noqa: E731
    assert excess(units, {"k": 1}, value) == ("k", "x", 5, 1)
    assert excess(units, {"k": 2}, value) is None  # 5 <= 6: x x y x x y x
    assert runs_ok(list("xxyxxyx"), {"k": 2}, value) and not runs_ok(list("xxxyxyx"), {"k": 2}, value)
    none_breaks = lambda u, key: None if u == "g" else u  # noqa: E731
    assert runs_ok(list("vgvgv"), {"k": 1}, none_breaks) and not runs_ok(list("vvg"), {"k": 1}, none_breaks)


def test_balanced_sample_skips_or_refills_an_emptied_group():
    units = ["a1", "a2", "a3", "b1"]
    key = lambda u: u[0]  # noqa: E731
    rows = design_compiler.balanced_sample(units, 4, key, random.Random(1), refill=False)
    assert sorted(rows) == sorted(units)  # a row is taken once: b's one row, then a's three
    cells = design_compiler.balanced_sample(units, 4, key, random.Random(1), refill=True)
    assert Counter(c[0] for c in cells) == {"a": 2, "b": 2} and cells.count("b1") == 2  # round-robin a, b, a, b
