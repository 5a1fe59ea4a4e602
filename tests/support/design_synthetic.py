"""Invented sessions of general designs, in exactly the trial-table format of docs/general_model.md.

Header: a general design's as its sessions were written before their tables left the Lakretz study's columns
out (experiments.schema.table_columns(earlier=True): the earlier layout, which names the built-in kinds' columns,
then one column per declared factor not named like a Lakretz column; the loader reads it as it reads today's);
the sidecar records `design.factors`, `list`, `lists`, `mode`. Answers are drawn
from a seeded generator with known parameters, so tests can compare the analyses with hand counts and
with independent fits. Writes plain CSV (the format), not through the session writer (another part).
"""
from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np

from experiments.schema import table_columns

FACTORS = {"head_number": ["sg", "pl"], "attractor_number": ["sg", "pl"], "grammatical": ["true", "false"]}
LAKRETZ_NAMED = {"condition", "grammatical", "structure", "dependency"}


def header(factors: dict[str, list[str]]) -> list[str]:
    return table_columns([f for f in factors if f not in LAKRETZ_NAMED], generic=True, earlier=True)


def base_row(experiment: str, subject: str, kind: str, trial: int, item: int, levels: dict[str, str], task: str,
             materials: dict, lst: int = 1) -> dict:
    cond = "-".join(levels.values())
    gram = levels.get("grammatical")
    return {"subject_id": subject, "subject_kind": kind, "session": 1, "experiment": experiment, "spec_hash": "h",
            "sequence_hash": "s", "block": "test", "trial_index": trial, "block_trial_index": trial,
            "item_id": f"{item}:{cond}", "structure": experiment, "condition": cond, "dependency": "",
            "violation_position": "none",
            "grammatical": "" if gram is None else ("True" if gram == "true" else "False"),
            "words": materials.get("sentence") or materials.get("prefix") or "", "critical_index": -1,
            "lexicon": "", "feedback": "False", "item": str(item), "list": lst, "task": task, "role": "test",
            "materials": json.dumps(materials, sort_keys=True), **{k: v for k, v in levels.items()
                                                                   if k not in LAKRETZ_NAMED}}


def write_session(root: Path, experiment: str, subject: str, rows: list[dict], factors: dict[str, list[str]],
                  meta: dict | None = None, lst: int = 1) -> Path:
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    path = data / f"study-{experiment}_subject-{subject}_session-1_data.csv"
    cols = header(factors)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})
    side = {"status": "completed", "design": {"factors": factors, "list": lst, "lists": "latin_square",
                                              "mode": "design"}} | (meta or {})
    path.with_suffix(".json").write_text(json.dumps(side), encoding="utf-8")
    return path


def conditions(factors: dict[str, list[str]]) -> list[dict[str, str]]:
    return [dict(zip(factors, lv, strict=False)) for lv in itertools.product(*factors.values())]


def agreement_judgments(root: Path, n_subjects: int = 8, n_items: int = 32, seed: int = 0,
                        kind: str = "human", protocol: str = "", model: str | None = None) -> list[Path]:
    """A 2 x 2 x 2 agreement-attraction judgment study (yes = acceptable), Latin square over 8 lists.

    P(yes) = logistic(1.2 + 2.2 * g - 1.0 * (1 - g) * mismatch + u_subject + w_item), g = grammatical,
    mismatch = attractor number differs from the head's (attraction: ungrammatical sentences with a
    mismatching attractor are accepted more often -> coded here as lower rejection)."""
    rng = np.random.default_rng(seed)
    conds = conditions(FACTORS)
    w_item = rng.normal(0, 0.4, n_items)
    paths = []
    for s in range(n_subjects):
        u = rng.normal(0, 0.6)
        rows = []
        lst = s % len(conds) + 1
        for t, item in enumerate(rng.permutation(n_items)):
            lv = conds[(item + s) % len(conds)]
            g = lv["grammatical"] == "true"
            mismatch = lv["head_number"] != lv["attractor_number"]
            eta = (-1.0 + 2.2 * g + (1.3 if (not g and mismatch) else 0.0)) + 1.0 + u + w_item[item]
            yes = rng.random() < 1 / (1 + np.exp(-eta))
            answer = "yes" if g else "no"
            response = "yes" if yes else "no"
            sent = (f"The key{'s' if lv['head_number'] == 'pl' else ''} "
                    f"to the cabinet{'s' if lv['attractor_number'] == 'pl' else ''} "
                    f"{'is' if (lv['head_number'] == 'sg') == g else 'are'} rusty .")
            r = base_row("agreement_attraction", f"S{s:02d}", kind, t, int(item), lv, "judgment",
                         {"sentence": sent, "answer": answer}, lst)
            r |= {"correct_response": answer, "response": response, "correct": str(response == answer),
                  "response_mode": "key", "rt_ms": float(np.exp(6.5 + 0.2 * (not g) + 0.3 * u + rng.normal(0, 0.25))),
                  "protocol": protocol, "context_mode": "none" if kind == "model" else ""}
            rows.append(r)
        meta = {"model": model} if model else {}
        paths.append(write_session(root, "agreement_attraction", f"S{s:02d}" + (f"-{protocol}" if protocol else ""),
                                   rows, FACTORS, meta, lst))
    return paths


def choice_sessions(root: Path, n_subjects: int = 6, n_items: int = 20, seed: int = 1,
                    bias: float = 0.25) -> list[Path]:
    """2AFC minimal pairs, positions counterbalanced; subjects know the answer with p 0.5 and otherwise
    pick screen position 0 with probability 0.5 + bias."""
    f = {"pair_type": ["agreement", "npi"]}
    rng = np.random.default_rng(seed)
    out = []
    for s in range(n_subjects):
        rows = []
        for t in range(n_items):
            opts = [f"good {t}", f"bad {t}"]
            order = [0, 1] if (t + s) % 2 == 0 else [1, 0]
            correct_pos = order.index(0)
            if rng.random() < 0.5:
                pos = correct_pos
            else:
                pos = 0 if rng.random() < 0.5 + bias else 1
            lv = {"pair_type": f["pair_type"][t % 2]}
            r = base_row("minimal_pairs", f"C{s}", "human", t, t, lv, "choice",
                         {"options": opts, "answer": opts[0], "prefix": ""})
            r |= {"option_order": json.dumps(order), "chosen_position": pos, "response": opts[order[pos]],
                  "correct": str(order[pos] == 0), "correct_response": opts[0]}
            rows.append(r)
        out.append(write_session(root, "minimal_pairs", f"C{s}", rows, f))
    return out


def rating_sessions(root: Path, n_subjects: int = 10, n_items: int = 16, seed: int = 2, effect: float = 1.0,
                    subject_sd: float = 0.7, item_sd: float = 0.5) -> list[Path]:
    """1-7 acceptability ratings: a latent logistic variable shifted by `effect` for grammatical sentences."""
    f = {"grammatical": ["true", "false"]}
    rng = np.random.default_rng(seed)
    w_item = rng.normal(0, item_sd, n_items)
    out = []
    for s in range(n_subjects):
        u = rng.normal(0, subject_sd)
        rows = []
        for t in range(n_items):
            g = (t + s) % 2 == 0
            lat = u + w_item[t] + (effect if g else -effect) + rng.logistic()
            rating = int(np.clip(np.digitize(lat, [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]) + 1, 1, 7))
            lv = {"grammatical": "true" if g else "false"}
            r = base_row("acceptability_rating", f"R{s}", "human", t, t, lv, "rating", {"sentence": f"sentence {t} ."})
            r |= {"rating": rating, "response": str(rating)}
            rows.append(r)
        out.append(write_session(root, "acceptability_rating", f"R{s}", rows, f))
    return out


def completion_sessions(root: Path) -> list[Path]:
    """Cloze: 2 subjects x 4 items with hand-checked scores."""
    f = {"constraint": ["high", "low"]}
    items = [("The cat chased the", "mouse", ["mice"]), ("She drank a cup of", "tea", ["coffee"]),
             ("He opened the", "door", []), ("They went to the", "park", ["beach"])]
    answers = {"K0": ["Mouse.", "coffee", "window", " park "], "K1": ["mice", "tea", "door", ""]}
    out = []
    for s, ans in answers.items():
        rows = []
        for t, ((prefix, target, acc), a) in enumerate(zip(items, ans, strict=False)):
            lv = {"constraint": "high" if t < 2 else "low"}
            r = base_row("cloze", s, "human", t, t, lv, "completion",
                         {"prefix": prefix, "target": target, "accepted": acc})
            r |= {"response_text": a if a else "", "response": a}
            rows.append(r)
        out.append(write_session(root, "cloze", s, rows, f))
    return out


SPR_ITEMS = [("The horse raced past the barn fell .", "The horse | raced past | the barn | fell ."),
             ("The old man the boats today .", "The old | man | the boats | today ."),
             ("The cotton clothing is made of grows here .", "The cotton | clothing is made of | grows | here ."),
             ("While Anna dressed the baby cried .", "While Anna | dressed | the baby | cried .")]


def reading_sessions(root: Path, n_subjects: int = 12, n_items: int = 16, seed: int = 3,
                     beta_surprisal: float = 12.0) -> tuple[list[Path], dict]:
    """Self-paced reading (humans) and surprisal (a model subject) of the same sentences.

    Human RT (ms) = 300 + beta * surprisal + 4 * surprisal_prev + 8 * length + subject + noise, with the
    surprisals the model session records; returns (paths, truth)."""
    f = {"ambiguity": ["ambiguous", "unambiguous"]}
    rng = np.random.default_rng(seed)
    sents = [(SPR_ITEMS[i % 4][0].replace("The", "The" if i < 4 else f"The{i}", 1),
              SPR_ITEMS[i % 4][1].replace("The", "The" if i < 4 else f"The{i}", 1)) for i in range(n_items)]
    sur = {i: rng.gamma(2.0, 2.5, len(s.split())).round(4) for i, (s, _) in enumerate(sents)}
    w_item = rng.normal(0, 20, n_items)
    out = []
    for s in range(n_subjects):
        u = rng.normal(0, 30)
        rows = []
        for i, (sent, regions) in enumerate(sents):
            words = sent.split()
            lv = {"ambiguity": "ambiguous" if (i + s) % 2 == 0 else "unambiguous"}
            rts = []
            for k, w in enumerate(words):
                prev = sur[i][k - 1] if k else 0.0
                rts.append(round(float(300 + beta_surprisal * sur[i][k] + 4 * prev + 8 * (len(w.strip(".")) or 1) + u
                                       + w_item[i] + rng.normal(0, 25)), 1))
            reg_rts = []
            pos = 0
            for chunk in regions.split("|"):
                n = len(chunk.split())
                reg_rts.append(round(sum(rts[pos:pos + n]), 1))
                pos += n
            r = base_row("self_paced_reading", f"P{s:02d}", "human", i, i, lv, "self_paced_reading",
                         {"sentence": sent, "regions": regions})
            r |= {"word_rts_ms": json.dumps(rts), "region_rts_ms": json.dumps(reg_rts)}
            rows.append(r)
        out.append(write_session(root, "self_paced_reading", f"P{s:02d}", rows, f))
    rows = []
    for i, (sent, regions) in enumerate(sents):
        lv = {"ambiguity": "ambiguous" if i % 2 == 0 else "unambiguous"}
        r = base_row("self_paced_reading", "M00", "model", i, i, lv, "self_paced_reading",
                     {"sentence": sent, "regions": regions})
        r |= {"word_surprisal_bits": json.dumps([float(x) for x in sur[i]]), "protocol": "surprisal",
              "context_mode": "none"}
        rows.append(r)
    out.append(write_session(root, "self_paced_reading", "M00", rows, f, {"model": "tiny-lm"}))
    return out, {"beta_surprisal": beta_surprisal, "surprisal": sur}
