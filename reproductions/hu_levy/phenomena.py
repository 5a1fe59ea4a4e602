"""Table 5 of seeds/003 (Appendix A): the phenomena of Experiments 3a/3b and their item counts, as a table.

The paper prints one row per phenomenon (dataset, name, # items); the release names the same
phenomena by its `suite` (SyntaxGym) or `category_fine` (BLiMP) values. `PAPER_TABLE5` pairs each
printed row with the release's value (in the paper's order, which is the release's sorted order), so
the reproduction can set the counts it read beside the printed ones, row by row. A value in the
files that the paper does not print, or a printed row with no items, is a row of its own, flagged.
"""
from __future__ import annotations

import pandas as pd

from reproductions.hu_levy.data import Dataset

# (dataset, release value, the paper's phenomenon as printed, the paper's # items)
PAPER_TABLE5: tuple[tuple[str, str, str, int], ...] = (
    ("syntaxgym", "center_embed", "Center embedding", 15),
    ("syntaxgym", "center_embed_mod", "Center embedding (modifier)", 15),
    ("syntaxgym", "cleft", "Cleft", 15),
    ("syntaxgym", "cleft_modifier", "Cleft (modifier)", 15),
    ("syntaxgym", "fgd-embed3", "Filler-gap dependencies (3 sentential embeddings)", 15),
    ("syntaxgym", "fgd-embed4", "Filler-gap dependencies (4 sentential embeddings)", 15),
    ("syntaxgym", "fgd_hierarchy", "Filler-gap dependencies (hierarchy)", 15),
    ("syntaxgym", "fgd_object", "Filler-gap dependencies (object extraction)", 15),
    ("syntaxgym", "fgd_pp", "Filler-gap dependencies (prepositional phrase extraction)", 15),
    ("syntaxgym", "fgd_subject", "Filler-gap dependencies (subject extraction)", 15),
    ("syntaxgym", "number_orc", "Subject-verb number agreement (object relative clause)", 15),
    ("syntaxgym", "number_prep", "Subject-verb number agreement (prepositional phrase)", 15),
    ("syntaxgym", "number_src", "Subject-verb number agreement (subject relative clause)", 15),
    ("syntaxgym", "reflexive_orc_fem", "Reflexive number agreement (object relative clause, feminine)", 15),
    ("syntaxgym", "reflexive_orc_masc", "Reflexive number agreement (object relative clause, masculine)", 15),
    ("syntaxgym", "reflexive_prep_fem", "Reflexive number agreement (prepositional phrase, feminine)", 15),
    ("syntaxgym", "reflexive_prep_masc", "Reflexive number agreement (prepositional phrase, masculine)", 15),
    ("syntaxgym", "reflexive_src_fem", "Reflexive number agreement (subject relative clause, feminine)", 15),
    ("syntaxgym", "reflexive_src_masc", "Reflexive number agreement (subject relative clause, masculine)", 15),
    ("syntaxgym", "subordination", "Subordination", 15),
    ("syntaxgym", "subordination_orc-orc", "Subordination (object relative clause)", 15),
    ("syntaxgym", "subordination_pp-pp", "Subordination (prepositional phrase)", 15),
    ("syntaxgym", "subordination_src-src", "Subordination (subject relative clause)", 15),
    ("blimp", "anaphor_agreement", "Anaphor agreement", 30),
    ("blimp", "argument_structure", "Argument structure", 30),
    ("blimp", "binding", "Binding", 30),
    ("blimp", "control_raising", "Control raising", 30),
    ("blimp", "determiner_noun_agreement", "Determiner-noun agreement", 30),
    ("blimp", "ellipsis", "Ellipsis", 30),
    ("blimp", "filler_gap_dependency", "Filler-gap dependency", 30),
    ("blimp", "irregular_forms", "Irregular forms", 30),
    ("blimp", "island_effects", "Island effects", 30),
    ("blimp", "npi_licensing", "NPI licensing", 30),
    ("blimp", "quantifiers", "Quantifiers", 30),
    ("blimp", "s-selection", "S-selection", 30),
    ("blimp", "subject_verb_agreement", "Subject-verb agreement", 30),
)
DATASET_LABEL = {"syntaxgym": "SyntaxGym", "blimp": "BLiMP"}


def table5(datasets: list[Dataset]) -> pd.DataFrame:
    """One row per phenomenon of the Experiment 3 corpora read: the paper's name and count beside the
    release's value, the items in the file and the items run. Empty when no such corpus was read."""
    by_name = {d.spec.name: d for d in datasets if d.spec.name in DATASET_LABEL and d.spec.path.startswith("exp3/")}
    if not by_name:
        return pd.DataFrame()
    rows = []
    known = set()
    for ds, value, printed, n_paper in PAPER_TABLE5:
        if ds not in by_name:
            continue
        known.add((ds, value))
        d = by_name[ds]
        in_file = _count(d, value, run=False)
        rows.append({"dataset": DATASET_LABEL[ds], "phenomenon": printed, "release_value": value,
                     "paper_items": n_paper, "items_in_file": in_file, "items_run": _count(d, value, run=True),
                     "agrees": in_file == n_paper})
    for ds, d in by_name.items():
        for value in sorted({it.group for it in d.all_items} - {v for s, v in known if s == ds}):
            rows.append({"dataset": DATASET_LABEL[ds], "phenomenon": "(not in the paper's Table 5)",
                         "release_value": value, "paper_items": 0, "items_in_file": _count(d, value, run=False),
                         "items_run": _count(d, value, run=True), "agrees": False})
    return pd.DataFrame(rows)


def _count(d: Dataset, value: str, run: bool) -> int:
    return sum(1 for it in (d.items if run else d.all_items) if it.group == value)
