"""Hu & Levy (2023): the conventions of the authors' released code against twinlab's, named in one place.

The paper's numbers were made by the authors' code (jennhu/metalinguistic-prompting: utils/llm.py
`make_prompt`, utils/models.py `OpenAI_LLM` and `T5_LLM`). Where that code and twinlab's own rules
differ, the reproduction follows the authors by default and offers twinlab's rule one option away:

* `--prompt-text authors` (default): the prompts as the code assembles them; `paper`: as Tables
  2-4b print them (blank lines, "..." and two Table 3 wordings differ; `prompts.py`).
* `--scoring authors` (default): whole sentences (Direct, Experiments 3a/3b) as the authors scored
  them: on a sequence-to-sequence model the pseudo-log-likelihood of their T5 code; where nothing
  precedes the sentence's first token (a served model without BOS, as their OpenAI models were)
  the sum over the tokens after the first (`token_logprobs[1:]`); where a start token precedes it
  (a local causal model, a server that adds BOS), every token. Continuations: every token of the
  answer (their T5 code; their OpenAI code also, except for the word match below).
* `--scoring exact`: twinlab's strict rule: a whole sentence is scored only with its first token
  (refused, and left unscored, on a server without BOS); a seq2seq model scores it as the decoder's
  log-probability after a lone sentinel, not the pseudo-log-likelihood.
* `--scoring openai-last-token`: the authors' OpenAI code exactly, a compatibility mode: it found
  the answer's tokens by walking back from the end of the prompt until the text read so far was a
  *substring* of " " + word (`cur_word in end_strs` on a string), which the last sub-token always is,
  so a word of several tokens counted its last sub-token only. Whole sentences as `authors`.
  Refused on seq2seq models (the authors' T5 code summed every token of the answer).
"""
from __future__ import annotations

from typing import Any

from reproductions.common import ReproError

PROMPT_TEXTS = {
    "authors": "as the authors' released code assembles them (utils/llm.py make_prompt: blank lines, '...')",
    "paper": "as the paper's Tables 2, 3, 4a and 4b print them",
}
SCORING = {
    "authors": "the authors' rules: whole sentences by their T5 pseudo-log-likelihood on seq2seq models, summed "
               "after the first token where no BOS precedes it (their OpenAI code), every token after a start "
               "token; answers: every token",
    "exact": "twinlab's: whole sentences need their first token's log-probability (refused on a server without "
             "BOS; seq2seq: the decoder's score after a lone sentinel); answers: every token",
    "openai-last-token": "the authors' OpenAI code exactly (compatibility): an answer counted by its last "
                         "sub-token only (their word match was a substring test); whole sentences as 'authors'",
}
DEFAULT_PROMPT_TEXT = "authors"
DEFAULT_SCORING = "authors"
LAST = "last:"  # cache key prefix of an answer's last sub-token (openai-last-token)

# Every difference between the authors' code and twinlab, and which one each default follows
# (the report's table and docs/reproductions.md list the same rows).
DIFFERENCES: tuple[tuple[str, str, str, str], ...] = (
    ("prompt text", "utils/llm.py: blank lines before the sentence/answer, '...', '(arrow, or interview?)?', "
     "'what word is more likely'", "the paper's Tables 2-4b (one line, '\u2026', two other wordings)",
     "authors (--prompt-text paper for the printed text)"),
    ("whole sentence, served model without BOS", "sum of token_logprobs[1:] (the first token has none)",
     "refused: the first token has no score", "authors (--scoring exact refuses)"),
    ("whole sentence, seq2seq", "pseudo-log-likelihood: each word masked in turn, final '.' dropped",
     "decoder log P(sentence </s> | lone sentinel)", "authors (--scoring exact)"),
    ("whole sentence, local causal model", "(not run by the authors)",
     "every token, the first after the BOS/EOS start token", "twinlab (the authors ran no such model)"),
    ("answer of several tokens, OpenAI models", "only the last sub-token (substring match of ' ' + word)",
     "every token of the answer", "twinlab (--scoring openai-last-token for the authors')"),
    ("answer on seq2seq", "the answer's tokens and </s>, after '<extra_id_0>' in the decoder",
     "the same", "both"),
    ("tie between options", "counted wrong in the notebook's '>' comparisons", "counted wrong (strict '>')", "both"),
    ("Meta answers in both orders", "separate runs per option order, averaged in the notebook",
     "both orders in one run, averaged", "both"),
)


def check(scoring: str, prompt_text: str, backend: str | None) -> None:
    """Refuse an unknown convention, or one that means nothing on the backend (before any model loads)."""
    if prompt_text not in PROMPT_TEXTS:
        raise ReproError(f"--prompt-text must be one of {', '.join(PROMPT_TEXTS)}, not {prompt_text!r}")
    if scoring not in SCORING:
        raise ReproError(f"--scoring must be one of {', '.join(SCORING)}, not {scoring!r}")
    if scoring == "openai-last-token" and backend == "seq2seq":
        raise ReproError("--scoring openai-last-token is the authors' OpenAI code's word match; their T5 code summed "
                         "every token of the answer (--scoring authors does that on --backend seq2seq)")


def backend_options(scoring: str, backend: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """The backend settings the scoring convention needs: a served model's whole-sentence rule."""
    if backend != "openai":
        return dict(options)
    want = "exact" if scoring == "exact" else "after-first"
    given = options.get("whole_sentence")
    if given is not None and given != want:
        raise ReproError(f"-B whole_sentence={given} contradicts --scoring {scoring} (which sets {want}); "
                         "leave out -B whole_sentence")
    return {**options, "whole_sentence": want}


def uses_pseudo_loglikelihood(scoring: str) -> bool:
    return scoring != "exact"


def describe(scoring: str, prompt_text: str) -> dict[str, Any]:
    """What provenance.json records about the conventions of a run."""
    return {"prompt_text": prompt_text, "prompt_text_means": PROMPT_TEXTS[prompt_text], "scoring": scoring,
            "scoring_means": SCORING[scoring],
            "defaults": {"prompt_text": DEFAULT_PROMPT_TEXT, "scoring": DEFAULT_SCORING},
            "differences": [dict(zip(("what", "authors_code", "twinlab", "default_follows"), d, strict=False))
                            for d in DIFFERENCES]}
