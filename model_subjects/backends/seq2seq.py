"""Sequence-to-sequence models (Flan-T5 style) behind the backend contract: `--backend seq2seq`.

A continuation's score is the decoder's log-probability of the answer given the encoder's input,
as Hu & Levy (2023, seeds/003, Section 3.3) score Flan-T5 and as their released code does it
(utils/models.py `T5_LLM.get_logprob_of_continuation`):

* `sentinel=True` (default, the paper's): the encoder reads the context with the T5 sentinel
  `<extra_id_0>` where the answer goes; the decoder target is `<extra_id_0> answer </s>`, and the
  score sums the log-probabilities of the answer's tokens and of `</s>` (`score_eos=True`, as the
  released code keeps the final `</s>` of the target when the prompt ends with the answer);
* `sentinel=False`: the encoder reads the context as it is and the decoder target is the answer
  alone (`</s>` scored only with `score_eos=True`).

The answer is tokenised on its own, without the leading space the causal backends move into it
(SentencePiece marks a word start itself). The paper's full-sentence pseudo-log-likelihood for the
Direct sentence measurements is `pseudo_loglikelihood` (not part of the contract: the Hu & Levy
reproduction uses it for whole-sentence requests when the backend has it); through `loglikelihood`,
an empty context scores the whole sentence after a lone sentinel. `add_bos` is refused (T5 has no BOS). Weights are
loaded offline (`AutoModelForSeq2SeqLM`) from a local folder or the local Hugging Face cache, as the transformers
backend loads causal models (`model_subjects.loading.resolve_model`).
"""
from __future__ import annotations

from typing import Any, Sequence

from model_subjects.backends.base import Backend, ModelLoadError, Progress
from model_subjects.backends.registry import register_backend
from model_subjects.loading import ResolvedModel, go_offline, resolve_model
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult

DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16", "auto": "float32"}
SENTINEL = "<extra_id_0>"


@register_backend("seq2seq")
class Seq2SeqBackend(Backend):
    """An encoder-decoder LM (T5, Flan-T5) scored as the decoder's log-probability of the answer."""

    def __init__(self, model: Any, tokenizer: Any, resolved: ResolvedModel, *, device: str = "cpu",
                 dtype: str = "float32", batch_size: int | str = "auto", sentinel: bool = True,
                 score_eos: bool = True):
        import torch  # torch loads only when a model runs

        self.torch = torch
        self.model = model
        self.tokenizer = tokenizer
        self.resolved = resolved
        self.name = resolved.name
        self.device = device
        self.dtype_name = dtype
        self.batch_size = 16 if str(batch_size).lower() == "auto" else int(batch_size)
        self.sentinel = bool(sentinel)
        self.score_eos = bool(score_eos)
        self.eos_id = tokenizer.eos_token_id
        self.sentinel_id = tokenizer.convert_tokens_to_ids(SENTINEL) if self.sentinel else None
        if self.sentinel and (self.sentinel_id is None or self.sentinel_id == tokenizer.unk_token_id):
            raise ModelLoadError(f"model {self.name!r}: its tokenizer has no {SENTINEL} sentinel; load it with "
                                 "-B sentinel=false")
        if self.eos_id is None and self.score_eos:
            raise ModelLoadError(f"model {self.name!r}: its tokenizer has no end-of-sequence token; -B score_eos=false")
        self.add_bos = False

    @classmethod
    def load(cls, model: str | None = None, *, dtype: str = "float32", device: str = "cpu", add_bos: bool = False,
             batch_size: int | str = "auto", threads: int | None = 1, sentinel: bool = True,
             score_eos: bool = True) -> "Seq2SeqBackend":
        go_offline()
        if add_bos:
            raise ModelLoadError("--add-bos: a sequence-to-sequence model has no BOS token; run without it")
        if not model:
            raise ModelLoadError("--backend seq2seq needs --model: a local Flan-T5/T5 folder or a Hugging Face id "
                                 "in the local cache (the bundled default is a causal model)")
        resolved = resolve_model(model)
        import torch  # torch loads only when a model runs
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer  # transformers loads only when a model runs
        from transformers.utils import logging as hf_logging  # transformers loads only when a model runs

        hf_logging.disable_progress_bar()
        dname = DTYPES.get(str(dtype).lower())
        if dname is None:
            raise ModelLoadError(f"unknown dtype {dtype!r}; use float32, bfloat16 or float16")
        dev = str(device).lower()
        if dev == "auto":
            dev = "cuda" if torch.cuda.is_available() else "cpu"
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise ModelLoadError(f"device {device!r} requested but CUDA is not available (torch {torch.__version__})")
        if threads and dev == "cpu":
            torch.set_num_threads(int(threads))
        try:
            tok = AutoTokenizer.from_pretrained(resolved.path, local_files_only=True, trust_remote_code=False)
            lm = AutoModelForSeq2SeqLM.from_pretrained(resolved.path, dtype=getattr(torch, dname),
                                                       local_files_only=True, weights_only=True,
                                                       trust_remote_code=False)  # data, not code
        except Exception as exc:
            raise ModelLoadError(f"could not load sequence-to-sequence model {resolved.name!r} from {resolved.path}: "
                                 f"{type(exc).__name__}: {exc}") from None
        lm.to(dev).eval()
        return cls(lm, tok, resolved, device=dev, dtype=dname, batch_size=batch_size, sentinel=sentinel,
                   score_eos=score_eos)

    def describe(self) -> dict[str, Any]:
        import transformers  # transformers loads only when a model runs

        info = dict(self.resolved.info)
        return {"name": self.name, "backend": "seq2seq", "kind": self.resolved.kind, "path": self.resolved.path,
                "revision": info.get("weights_sha256") or info.get("snapshot"),
                "weights_sha256": info.get("weights_sha256"), "architecture": type(self.model).__name__,
                "n_parameters": int(sum(p.numel() for p in self.model.parameters())), "dtype": self.dtype_name,
                "device": self.device, "add_bos": False, "batch_size": self.batch_size,
                "mode": f"sentinel={self.sentinel},score_eos={self.score_eos}",
                "scoring": ("decoder log P('<extra_id_0> answer </s>' | context + '<extra_id_0>'), the answer's tokens"
                            + (" and </s>" if self.score_eos else "") if self.sentinel else
                            "decoder log P(answer | context)" + (" with </s>" if self.score_eos else "")),
                "versions": {"torch": self.torch.__version__, "transformers": transformers.__version__}}

    # ------------------------------------------------------------------ tokenisation
    def encode_request(self, r: LoglikelihoodRequest) -> tuple[list[int], list[int], list[bool]]:
        """(encoder ids, decoder target ids, which target positions are scored)."""
        answer = r.continuation.strip()
        if not answer:
            raise ValueError(f"empty continuation after context {r.context[-40:]!r}")
        enc_text = r.context + SENTINEL if self.sentinel else r.context
        enc = list(self.tokenizer(enc_text, add_special_tokens=True)["input_ids"])
        ans = list(self.tokenizer(answer, add_special_tokens=False)["input_ids"])
        target = ([self.sentinel_id] if self.sentinel else []) + ans + ([self.eos_id] if self.score_eos else [])
        skip = 1 if self.sentinel else 0
        return enc, target, [k >= skip for k in range(len(target))]

    def pseudo_loglikelihood(self, sentences: Sequence[str]) -> list[float]:
        """The paper's Flan-T5 full-sentence score (Salazar et al. style pseudo-log-likelihood), as the
        released code computes it (utils/models.py `T5_LLM.get_full_sentence_logprob`): the final period
        dropped, the sentence split at spaces, each word in turn replaced by `<extra_id_0>` in the encoder's
        input and predicted in the target (`w <extra_id_0>` for the first word, `<extra_id_0> w` for the
        last, `<extra_id_0> w <extra_id_1>` otherwise), summing the log-probabilities of the target's
        tokens other than `<extra_id_0>`, `<extra_id_1>` and `</s>`."""
        tok = self.tokenizer
        ignore = set(tok.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>", "</s>"]))
        units, owner = [], []
        for n, s in enumerate(sentences):
            words = (s[:-1] if s.endswith(".") else s).split(" ")
            for i, w in enumerate(words):
                inp = (" ".join(words[:i]) + " <extra_id_0> " + " ".join(words[i + 1:])).strip()
                out = (f"{w} <extra_id_0>" if i == 0 else f"<extra_id_0> {w}" if i == len(words) - 1
                       else f"<extra_id_0> {w} <extra_id_1>")
                enc = list(tok(inp)["input_ids"])
                target = list(tok(out)["input_ids"])
                units.append((enc, target, [t not in ignore for t in target]))
                owner.append(n)
        totals = [0.0] * len(sentences)
        for n, res in zip(owner, self._score(units), strict=False):
            totals[n] += res.logprob
        return totals

    # ------------------------------------------------------------------ scoring
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      progress: Progress | None = None) -> list[LoglikelihoodResult]:
        return self._score([self.encode_request(r) for r in requests], progress)

    def _score(self, encoded: list[tuple[list[int], list[int], list[bool]]],
               progress: Progress | None = None) -> list[LoglikelihoodResult]:
        """Sum of the log-probabilities at the scored target positions; padded batches sorted by length."""
        torch = self.torch
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))
        results: list[LoglikelihoodResult | None] = [None] * len(encoded)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            n_enc = max(len(encoded[i][0]) for i in idx)
            n_dec = max(len(encoded[i][1]) for i in idx)
            enc = torch.full((len(idx), n_enc), pad, dtype=torch.long)
            mask = torch.zeros((len(idx), n_enc), dtype=torch.long)
            labels = torch.full((len(idx), n_dec), -100, dtype=torch.long)
            for b, i in enumerate(idx):
                e, t, _ = encoded[i]
                enc[b, :len(e)] = torch.tensor(e)
                mask[b, :len(e)] = 1
                labels[b, :len(t)] = torch.tensor(t)
            with torch.no_grad():
                logits = self.model(input_ids=enc.to(self.device), attention_mask=mask.to(self.device),
                                    labels=labels.to(self.device)).logits
            lp = torch.log_softmax(logits.double(), -1).cpu()  # float64 sums: as exact as the reference
            for b, i in enumerate(idx):
                _, t, scored = encoded[i]
                pos = torch.tensor([k for k, keep in enumerate(scored) if keep], dtype=torch.long)
                rows = lp[b, pos]
                ids = torch.tensor(t)[pos]
                tok_lp = rows.gather(1, ids[:, None])[:, 0].double()
                greedy = bool((rows.argmax(-1) == ids).all())
                results[i] = LoglikelihoodResult(float(tok_lp.sum()), greedy, len(ids),
                                                 tuple(float(x) for x in tok_lp))
            if progress:
                progress(len(idx))
        return results  # type: ignore[return-value]

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        out: list[LoglikelihoodResult] = []
        for r in requests:
            bs, self.batch_size = self.batch_size, 1
            try:
                out += self.loglikelihood([r])
            finally:
                self.batch_size = bs
        return out

    def generate_until(self, requests: Sequence[GenerationRequest],
                       progress: Progress | None = None) -> list[str]:
        """Greedy decoding from the encoder's reading of the context (no sentinel), cut at a stop string."""
        torch = self.torch
        out = []
        for r in requests:
            enc = self.tokenizer(r.context, return_tensors="pt").to(self.device)
            with torch.no_grad():
                ids = self.model.generate(**enc, max_new_tokens=r.max_new_tokens, do_sample=False)
            text = self.tokenizer.decode(ids[0], skip_special_tokens=True)
            body = text.lstrip() if r.skip_leading_whitespace else text
            cut = min([body.find(s) for s in r.until if s and body.find(s) >= 0] or [len(body)])
            out.append(body[:cut])
            if progress:
                progress(1)
        return out
