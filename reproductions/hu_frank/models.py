"""The paper's Table 2: the 13 models, their family, size and training tokens (as the paper prints them).

Sizes are the paper's (the names' sizes, in billions, as the authors' notebook parses them: "Pythia 1.4B"
-> 1.4); they enter equations (1)-(2) as log10(billions). OLMo-7B checkpoints are named
`OLMo-7B_step<N>-tokens<M>B`; the final model (no revision) is step 557000, as in the authors' notebook.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

FAMILY_ORDER = ("Pythia", "OLMo", "Gemma", "Llama-2", "Mistral")
FINAL_OLMO_7B_STEP = 557_000  # the authors' training_time notebook: revision NaN -> step 557000
FINAL_OLMO_7B_TOKENS_B = 2_500.0  # Table 2: OLMo 7B, 2.5 T tokens


@dataclass(frozen=True)
class ModelInfo:
    model_id: str  # the Hugging Face id in the outputs' `model` column
    name: str  # the paper's name ("Pythia 1.4B")
    family: str
    n_params_b: float  # billions, as the paper names the size
    training_tokens_b: float | None  # billions of training tokens (Table 2); None = unknown (Mistral)
    data_cutoff: str


def _m(model_id: str, name: str, tokens: float | None, cutoff: str) -> ModelInfo:
    family, size = name.split(" ")
    return ModelInfo(model_id, name, family, float(size.rstrip("B")), tokens, cutoff)


TABLE2: dict[str, ModelInfo] = {m.model_id: m for m in (
    _m("EleutherAI/pythia-1b-deduped", "Pythia 1B", 207, "2020"),
    _m("EleutherAI/pythia-1.4b-deduped", "Pythia 1.4B", 207, "2020"),
    _m("EleutherAI/pythia-2.8b-deduped", "Pythia 2.8B", 207, "2020"),
    _m("EleutherAI/pythia-6.9b-deduped", "Pythia 6.9B", 207, "2020"),
    _m("EleutherAI/pythia-12b-deduped", "Pythia 12B", 207, "2020"),
    _m("allenai/OLMo-1B", "OLMo 1B", 3_000, "Feb/March 2023"),
    _m("allenai/OLMo-7B", "OLMo 7B", 2_500, "Feb/March 2023"),
    _m("google/gemma-2b", "Gemma 2B", 2_000, "unknown (before Feb 2024)"),
    _m("google/gemma-7b", "Gemma 7B", 6_000, "unknown (before Feb 2024)"),
    _m("meta-llama/Llama-2-7b-hf", "Llama-2 7B", 2_000, "Sept 2022"),
    _m("meta-llama/Llama-2-13b-hf", "Llama-2 13B", 2_000, "Sept 2022"),
    _m("meta-llama/Llama-2-70b-hf", "Llama-2 70B", 2_000, "Sept 2022"),
    _m("mistralai/Mistral-7B-v0.1", "Mistral 7B", None, "unknown (before Oct 2023)"),
)}
MODEL_ORDER = tuple(m.name for f in FAMILY_ORDER for m in TABLE2.values() if m.family == f)

_REVISION = re.compile(r"^step(\d+)-tokens(\d+(?:\.\d+)?)B$")


def checkpoint(revision: object) -> tuple[int, float]:
    """(training step, billions of tokens) of an OLMo-7B revision ("step10000-tokens44B"); the final model
    for an empty revision. Raises ValueError for anything else."""
    if revision is None or (isinstance(revision, float) and revision != revision) or str(revision).strip() == "":
        return FINAL_OLMO_7B_STEP, FINAL_OLMO_7B_TOKENS_B
    m = _REVISION.match(str(revision).strip())
    if not m:
        raise ValueError(f"revision {revision!r} is not of the form step<N>-tokens<M>B")
    return int(m.group(1)), float(m.group(2))


def table2_frame():
    """Table 2 as a frame (recorded in the report and in tables/models.csv)."""

    return pd.DataFrame([{"model": m.name, "model_id": m.model_id, "family": m.family, "n_params_b": m.n_params_b,
                          "training_tokens_b": m.training_tokens_b, "data_cutoff": m.data_cutoff}
                         for name in MODEL_ORDER for m in TABLE2.values() if m.name == name])
