"""Prompt sets of seeds/000 (Lampinen), for model-subject contexts.

Sources: "paper" marks text printed in seeds/000 (two-shot and eight-shot prompt A in the main
text, the nested/successive shots and the swap order in appendix A, the single-nested simple
prompt and the zero-shot prompts in appendix B). The paper shows its other prompts only as
figures, so prompts B and C of each type are written here by the same rules: grammatical,
singular/plural balanced, one sentence per line, no noun, verb or preposition of the test
lexicon, and no content word shared with the other prompts of the same type.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptSet:
    name: str
    kind: str  # "fewshot" (example sentences) or "instruction" (zero-shot task statement)
    lines: tuple[str, ...]
    source: str  # "paper" or "twinlab"

    @property
    def text(self) -> str:
        """The prompt as it precedes a trial: one sentence per line."""
        return "\n".join(self.lines)


NESTED_SHOTS: tuple[str, ...] = (
    "The scientist that the teachers see researches neuroscience.",
    "The computer that the children build is fancy.",
    "The doctors that the bicyclists by the tree visit are old.",
    "The dancer that the choreographers talk to is talented.",
    "The chairs that the professor buys are uncomfortable.",
    "The dogs by the bushes eat meat.",
    "The magician that the journalist interviews is mysterious.",
    "The singers that the violinist accompanies are popular.",
)
SUCCESSIVE_SHOTS: tuple[str, ...] = (
    "The scientist researches what the teachers see.",
    "The computer is recording what the children build.",
    "The doctors are tired when the bicyclists by the tree visit.",
    "The dancer is talented, so the choreographers are interested.",
    "The chairs are uncomfortable but the professor sits.",
    "The dogs eat meat by the bushes.",
    "The magician says that the journalist is nice.",
    "The singers know that the violinist plays.",
)
# order in which nested examples replace successive ones (seeds/000, appendix A)
SWAP_ORDER: tuple[int, ...] = (5, 2, 3, 7, 1, 0, 6, 4)


def interpolated_shots(n_nested: int) -> tuple[str, ...]:
    """Eight-shot prompt with the first `n_nested` positions of SWAP_ORDER nested, the rest successive."""
    if not 0 <= n_nested <= 8:
        raise ValueError(f"n_nested must be 0..8, got {n_nested}")
    swapped = set(SWAP_ORDER[:n_nested])
    return tuple(NESTED_SHOTS[k] if k in swapped else SUCCESSIVE_SHOTS[k] for k in range(8))


_SETS: list[PromptSet] = [
    PromptSet("twoshot_a", "fewshot", (
        "The computer that the children build is fancy.",
        "The chairs that the professor buys are uncomfortable.",
    ), "paper"),
    PromptSet("twoshot_b", "fewshot", (
        "The bridge that the engineers design is sturdy.",
        "The letters that the author writes are long.",
    ), "twinlab"),
    PromptSet("twoshot_c", "fewshot", (
        "The soup that the chefs prepare is spicy.",
        "The songs that the pianist composes are beautiful.",
    ), "twinlab"),
    PromptSet("eightshot_a", "fewshot", (
        "The scientist researches neuroscience.",
        "The computer that the children build is fancy.",
        "The doctors that the bicyclists by the tree visit are old.",
        "The dancer that the choreographers talk to is talented.",
        "The chairs that the professor buys are uncomfortable.",
        "The dogs eat meat.",
        "The magician that the journalist interviews is mysterious.",
        "The singers that the violinist accompanies are popular.",
    ), "paper"),
    PromptSet("eightshot_b", "fewshot", (
        "The gardener waters roses.",
        "The bridge that the engineers design is sturdy.",
        "The sailors that the captains on the ship command are brave.",
        "The novelist that the editors publish is rich.",
        "The letters that the author writes are long.",
        "The cats drink milk.",
        "The wizard that the historian studies is legendary.",
        "The drummers that the guitarist joins are loud.",
    ), "twinlab"),
    PromptSet("eightshot_c", "fewshot", (
        "The astronomer photographs comets.",
        "The soup that the chefs prepare is spicy.",
        "The runners that the coaches at the stadium train are fast.",
        "The king that the knights serve is wise.",
        "The songs that the pianist composes are beautiful.",
        "The horses chew hay.",
        "The detective that the reporter questions is clever.",
        "The potters that the weaver teaches are skilled.",
    ), "twinlab"),
    PromptSet("simple", "fewshot", (
        "The children build computers.",
        "The chairs that the professor buys are uncomfortable.",
    ), "paper"),
    PromptSet("zeroshot_study", "instruction", (
        "You are about to take part in a study on language comprehension. Please complete these "
        "sentences carefully and with correct grammar.",
    ), "paper"),
    PromptSet("zeroshot_linguist", "instruction", (
        "The renowned linguist Noam Chomsky, an emeritus professor at MIT and an expert on analysis of "
        "syntactic structures, provided the following examples of challenging grammatically-correct sentences:",
    ), "paper"),
    PromptSet("zeroshot_study_matched", "instruction", (
        "You are about to take part in a study, created by researchers at MIT to investigate language "
        "comprehension, which requires you to complete these sentences carefully and with correct grammar.",
    ), "paper"),
] + [PromptSet(f"interp_{n}", "fewshot", interpolated_shots(n), "paper") for n in range(9)] + [
    # seeds/000 appendix B ("Performance on Recombined Prompts"): three eight-shot prompts made by randomly
    # shuffling together the sentences of the three hand-written ones. The paper prints its own only as a
    # graphic, so these are drawn the same way: random.Random(2024).shuffle of eightshot_a+b+c, cut in eights.
    PromptSet("recombined_d", "fewshot", (
        "The horses chew hay.",
        "The astronomer photographs comets.",
        "The doctors that the bicyclists by the tree visit are old.",
        "The sailors that the captains on the ship command are brave.",
        "The computer that the children build is fancy.",
        "The scientist researches neuroscience.",
        "The letters that the author writes are long.",
        "The wizard that the historian studies is legendary.",
    ), "twinlab"),
    PromptSet("recombined_e", "fewshot", (
        "The chairs that the professor buys are uncomfortable.",
        "The dancer that the choreographers talk to is talented.",
        "The songs that the pianist composes are beautiful.",
        "The novelist that the editors publish is rich.",
        "The soup that the chefs prepare is spicy.",
        "The king that the knights serve is wise.",
        "The detective that the reporter questions is clever.",
        "The potters that the weaver teaches are skilled.",
    ), "twinlab"),
    PromptSet("recombined_f", "fewshot", (
        "The singers that the violinist accompanies are popular.",
        "The gardener waters roses.",
        "The cats drink milk.",
        "The magician that the journalist interviews is mysterious.",
        "The bridge that the engineers design is sturdy.",
        "The runners that the coaches at the stadium train are fast.",
        "The dogs eat meat.",
        "The drummers that the guitarist joins are loud.",
    ), "twinlab"),
]

PROMPT_SETS: dict[str, PromptSet] = {p.name: p for p in _SETS}
# groups a context may name, e.g. fewshot:twoshot runs the three two-shot prompts
PROMPT_GROUPS: dict[str, tuple[str, ...]] = {
    "twoshot": ("twoshot_a", "twoshot_b", "twoshot_c"),
    "eightshot": ("eightshot_a", "eightshot_b", "eightshot_c"),
    "interp": tuple(f"interp_{n}" for n in range(9)),
    "recombined": ("recombined_d", "recombined_e", "recombined_f"),
    "zeroshot": ("zeroshot_study", "zeroshot_linguist", "zeroshot_study_matched"),
}


def get_prompt_set(name: str) -> PromptSet:
    try:
        return PROMPT_SETS[name]
    except KeyError:
        raise KeyError(f"unknown prompt set {name!r}; known: {', '.join(PROMPT_SETS)}") from None


def resolve_prompt_sets(name: str) -> list[PromptSet]:
    """A prompt set or a group name -> the prompt sets it stands for."""
    if name in PROMPT_GROUPS:
        return [PROMPT_SETS[n] for n in PROMPT_GROUPS[name]]
    return [get_prompt_set(name)]
