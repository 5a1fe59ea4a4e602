"""Hugging Face transformers backend: exact continuation log-probabilities, fast.

Correctness rules (tested against a plain unbatched forward pass):
  * a (context, continuation) pair is tokenised as in lm-evaluation-harness: trailing context
    spaces move into the continuation, the whole string is encoded and split at the length of
    the encoded context;
  * BOS is an explicit setting (`add_bos`): prepended to every sequence or to none. A sequence
    whose context is empty still needs something to condition the first token on; as in
    lm-evaluation-harness it then starts with the BOS token (or EOS if the model has none);
  * log-probabilities are summed over exactly the continuation's tokens, computed in float32.

Speed (default `prefix_sharing="tree"`, see `model_subjects.prefix_tree`):
  * all input sequences go into a prefix tree; every shared token prefix (a few-shot prompt, the
    templated opening of a sentence) is encoded once and its keys/values are reused below it;
  * batch sizes come from a token budget for the device (`model_subjects.batching`).
The earlier scheme (`prefix_sharing="prompt"`, kept as an ablation):
  * requests that share a context and whose continuations are prefixes of one another's inputs
    share one forward pass (single-token alternatives: one pass for both);
  * sequences sharing a long token prefix (a few-shot prompt) encode it once; its KV cache is
    reused by every batch;
  * batches are built from length-sorted sequences, left-padded (explicit positions and mask),
    and only the logits that are needed are computed (`logits_to_keep`);
  * a running context (`stream`) extends one growing KV cache trial by trial
    (`model_subjects.kv_stream.KVStream`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

from model_subjects.backends.base import Backend, ModelLoadError, Progress
from model_subjects.backends.registry import register_backend
from model_subjects.batching import sizer_for
from model_subjects.kv_stream import KVStream
from model_subjects.loading import ResolvedModel, go_offline, resolve_model
from model_subjects.prefix_tree import TreeScorer
from model_subjects.requests import (
    GenerationRequest,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PairTokenizer,
    split_tokens,
)
from model_subjects.stream_group import StreamGroup

DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16", "half": "float16", "auto": "auto"}


@dataclass
class _Unit:
    """One scored continuation: the full token sequence and how many of its last tokens are scored."""

    full: tuple[int, ...]
    n_cont: int


def _lcp(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@register_backend("transformers")
class TransformersBackend(PairTokenizer, Backend):
    """A causal LM loaded with `AutoModelForCausalLM` (CPU, CUDA, or `device_map="auto"`)."""

    def __init__(self, model: Any, tokenizer: Any, resolved: ResolvedModel, *, add_bos: bool = False,
                 device: str = "cpu", dtype: str = "float32", batch_size: int | str = "auto",
                 max_batch_tokens: int | None = None, min_prefix: int = 16, padding_side: str = "left",
                 threads: int | None = 1, prefix_sharing: str = "tree"):
        import torch  # torch loads only when a model runs

        if padding_side not in ("left", "right"):
            raise ValueError(f"padding_side must be 'left' or 'right', not {padding_side!r}")
        self.torch = torch
        self.model = model
        self.tokenizer = tokenizer
        self.resolved = resolved
        self.name = resolved.name
        self.add_bos = bool(add_bos)
        self.device_setting = device
        self.dtype_name = dtype
        if prefix_sharing not in ("tree", "prompt"):
            raise ValueError(f"prefix_sharing must be 'tree' or 'prompt', not {prefix_sharing!r}")
        self.prefix_sharing = prefix_sharing
        self._max_batch_tokens = max_batch_tokens
        self.max_batch_tokens = max(1, int(max_batch_tokens or 16384))
        self.min_prefix = max(1, int(min_prefix))
        self.padding_side = padding_side
        self.threads = threads
        self.input_device = model.device if hasattr(model, "device") else torch.device("cpu")
        bos = tokenizer.bos_token_id
        eos = tokenizer.eos_token_id
        if self.add_bos and bos is None:
            raise ModelLoadError(f"model {self.name!r} has no BOS token; run it with --no-add-bos")
        self.bos_id = bos
        self.start_id = bos if bos is not None else eos  # conditions the first token of an empty context
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos or 0)
        self.prefix_ids: tuple[int, ...] = (bos,) if self.add_bos else ()
        self.num_layers = model.config.get_text_config().num_hidden_layers
        self._enc_cache: dict[str, tuple[int, ...]] = {}
        self.oom_backoffs = 0  # batches halved after an out-of-memory error (prompt path)
        self.batch_size = batch_size  # builds the batch policy (self.sizer)
        self.last_tree_tokens = 0  # tokens the last prefix-tree call ran through the model
        self.last_forward_calls = 0

    @property
    def batch_size(self) -> int | str:
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: int | str) -> None:
        """A row limit or "auto"; setting it rebuilds the batch policy for this model and device."""

        auto = str(value).lower() == "auto"
        self._batch_size = "auto" if auto else max(1, int(value))
        self.sizer = sizer_for(self.model, self.device_setting, self._batch_size, self._max_batch_tokens)

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, model: str | None = None, *, dtype: str = "float32", device: str = "cpu", add_bos: bool = False,
             batch_size: int | str = "auto", threads: int | None = 1, padding_side: str = "left",
             min_prefix: int = 16, max_batch_tokens: int | None = None,
             prefix_sharing: str = "tree") -> "TransformersBackend":
        go_offline()
        resolved = resolve_model(model)
        import torch  # torch loads only when a model runs
        from transformers import AutoModelForCausalLM, AutoTokenizer  # transformers loads only when a model runs
        from transformers.utils import logging as hf_logging  # transformers loads only when a model runs

        hf_logging.disable_progress_bar()
        dname = DTYPES.get(str(dtype).lower())
        if dname is None:
            raise ModelLoadError(f"unknown dtype {dtype!r}; use float32, bfloat16 or float16")
        dev = str(device).lower()
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise ModelLoadError(f"device {device!r} requested but CUDA is not available (torch {torch.__version__})")
        if dname == "auto":
            dname = "bfloat16" if dev.startswith("cuda") or dev == "auto" else "float32"
        torch_dtype = getattr(torch, dname)
        if threads and (dev == "cpu"):
            torch.set_num_threads(int(threads))
        if dev == "cpu":
            # grouped-query attention without materialising repeated K/V heads, also with a mask:
            # same results, ~30% faster attention over a long running history on CPU
            os.environ.setdefault("TRANSFORMERS_SDPA_FORCE_GQA", "1")
        # weights are data: a pickled pytorch_model.bin is read with weights_only (tensors, no code), and no
        # Python file shipped with a model folder is run (docs/guarantees.md)
        kwargs: dict[str, Any] = {"dtype": torch_dtype, "local_files_only": True, "weights_only": True,
                                  "trust_remote_code": False}
        if dev == "auto":
            kwargs["device_map"] = "auto"
        try:
            tok = AutoTokenizer.from_pretrained(resolved.path, local_files_only=True, trust_remote_code=False)
            lm = AutoModelForCausalLM.from_pretrained(resolved.path, **kwargs)
        except Exception as exc:
            raise ModelLoadError(
                f"could not load model {resolved.name!r} from {resolved.path}: {type(exc).__name__}: {exc}"
            ) from None
        if dev != "auto":
            lm.to(dev)
        lm.eval()
        return cls(lm, tok, resolved, add_bos=add_bos, device=dev, dtype=dname, batch_size=batch_size,
                   threads=threads, padding_side=padding_side, min_prefix=min_prefix,
                   max_batch_tokens=max_batch_tokens, prefix_sharing=prefix_sharing)

    def describe(self) -> dict[str, Any]:
        import transformers  # transformers loads only when a model runs

        torch = self.torch
        info = dict(self.resolved.info)
        return {
            "name": self.name,
            "kind": self.resolved.kind,
            "path": self.resolved.path,
            "revision": info.get("weights_sha256") or info.get("snapshot") or info.get("weights_size"),
            "weights_sha256": info.get("weights_sha256"),
            "source": {k: v for k, v in info.items() if k != "weights_sha256"},
            "architecture": type(self.model).__name__,
            "n_parameters": int(sum(p.numel() for p in self.model.parameters())),
            "dtype": self.dtype_name,
            "device": str(self.input_device) if self.device_setting != "auto" else "auto",
            "device_map": getattr(self.model, "hf_device_map", None),
            "add_bos": self.add_bos,
            "bos_token": self.tokenizer.bos_token,
            "empty_context_token": (self.tokenizer.convert_ids_to_tokens(self.start_id)
                                    if self.start_id is not None else None),
            "padding_side": self.padding_side,
            "batch_size": self.batch_size,
            "batching": self.sizer.describe(),
            "prefix_sharing": self.prefix_sharing,
            "threads": torch.get_num_threads(),
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            "sdpa_force_gqa": os.environ.get("TRANSFORMERS_SDPA_FORCE_GQA") == "1",
            "tokenisation": "lm-evaluation-harness pair split (whole string encoded, split at context length)",
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        }

    # ------------------------------------------------------------------ tokenisation
    def encode(self, text: str) -> tuple[int, ...]:
        """Token ids of `text` without special tokens (memoised: contexts repeat a lot)."""
        ids = self._enc_cache.get(text)
        if ids is None:
            ids = tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if len(self._enc_cache) > 200_000:
                self._enc_cache.clear()
            self._enc_cache[text] = ids
        return ids

    def decode_ids(self, ids: Sequence[int]) -> str:
        """The text of token ids, exactly (to find where a context ends among a whole text's tokens)."""
        return self.tokenizer.decode(list(ids), clean_up_tokenization_spaces=False)

    def _encode_many(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._enc_cache]
        for start in range(0, len(todo), 2048):
            chunk = todo[start:start + 2048]
            for t, ids in zip(chunk, self.tokenizer(chunk, add_special_tokens=False)["input_ids"], strict=False):
                self._enc_cache[t] = tuple(ids)
        return [self.encode(t) for t in texts]

    def _units(self, requests: Sequence[LoglikelihoodRequest]) -> list[_Unit]:
        pairs = [self.split_pair(r.context, r.continuation) for r in requests]
        ctxs = self._encode_many([c for c, _ in pairs])
        wholes = self._encode_many([c + k for c, k in pairs])
        units = []
        for (c, k), ctx, whole in zip(pairs, ctxs, wholes, strict=False):
            ctx, cont = split_tokens(ctx, whole, c, self.decode_ids)
            if not cont:
                raise ValueError(f"continuation {k!r} encodes to no tokens after context {c[-40:]!r}")
            units.append(_Unit(self.sequence_start(ctx) + ctx + cont, len(cont)))
        return units

    # ------------------------------------------------------------------ scoring
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      progress: Progress | None = None) -> list[LoglikelihoodResult]:
        if not requests:
            return []
        units = self._units(requests)
        token_lps = self._score_units(units, progress)
        out = []
        for u, (lps, greedy) in zip(units, token_lps, strict=False):
            out.append(LoglikelihoodResult(logprob=float(sum(lps)), is_greedy=bool(greedy), n_tokens=u.n_cont,
                                           token_logprobs=tuple(float(x) for x in lps)))
        return out

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        """One plain forward pass per request: batch 1, no padding, no cache (batch-invariant)."""
        torch = self.torch
        out = []
        with torch.inference_mode():
            for u in self._units(requests):
                ids = torch.tensor([list(u.full[:-1])], device=self.input_device)
                logits = self.model(input_ids=ids, logits_to_keep=u.n_cont).logits[0].float()
                tgt = torch.tensor(u.full[-u.n_cont:], device=logits.device)
                lp = torch.log_softmax(logits, -1)[torch.arange(u.n_cont, device=logits.device), tgt]
                greedy = bool((logits.argmax(-1) == tgt).all())
                lps = tuple(float(x) for x in lp.double().cpu().tolist())
                out.append(LoglikelihoodResult(float(sum(lps)), greedy, u.n_cont, lps))
        return out

    def _score_units(self, units: list[_Unit], progress: Progress | None) -> list[tuple[list[float], bool]]:
        if self.prefix_sharing == "tree":
            scorer = TreeScorer(self, self.sizer)
            out = scorer.score_units([u.full for u in units], [u.n_cont for u in units], progress)
            self.last_tree_tokens, self.last_forward_calls = scorer.tokens_run, scorer.forward_calls
            return out
        return self._score_units_prompt(units, progress)

    def _score_units_prompt(self, units: list[_Unit], progress: Progress | None) -> list[tuple[list[float], bool]]:
        """The earlier scheme (kept as an ablation): one long shared prompt cached, the rest batched flat."""
        # 1. carriers: one input sequence serves every unit whose input is a prefix of it
        #    (same context; e.g. both single-token alternatives of a forced choice).
        carriers: list[tuple[int, ...]] = []
        first_needed: list[int] = []
        owners: list[list[int]] = []
        unit_carrier: list[int] = [0] * len(units)
        by_ctx: dict[tuple[int, ...], list[int]] = {}
        for i, u in enumerate(units):
            by_ctx.setdefault(u.full[: len(u.full) - u.n_cont], []).append(i)
        for ctx, idxs in by_ctx.items():
            local: list[int] = []  # carrier ids of this context
            for i in sorted(idxs, key=lambda j: -units[j].n_cont):
                inp = units[i].full[:-1]
                for c in local:
                    if carriers[c][: len(inp)] == inp:
                        unit_carrier[i] = c
                        owners[c].append(i)
                        break
                else:
                    carriers.append(inp)
                    first_needed.append(len(ctx) - 1)
                    owners.append([i])
                    unit_carrier[i] = len(carriers) - 1
                    local.append(len(carriers) - 1)
        # 2. prefix groups: length-sorted runs of carriers sharing a long token prefix
        order = sorted(range(len(carriers)), key=lambda c: carriers[c])
        groups: list[tuple[int, list[int]]] = []
        cur: list[int] = []
        lcp = 0
        for c in order:
            if not cur:
                cur, lcp = [c], min(len(carriers[c]) - 1, first_needed[c])
                continue
            limit = min(lcp, first_needed[c], len(carriers[c]) - 1)
            shared = _lcp(carriers[cur[0]], carriers[c], limit)
            if shared >= self.min_prefix:
                cur.append(c)
                lcp = shared
            else:
                groups.append((lcp, cur))
                cur, lcp = [c], min(len(carriers[c]) - 1, first_needed[c])
        if cur:
            groups.append((lcp, cur))
        # sequences without a long shared prefix are batched together, without a prefix cache
        shared = [(lcp, m) for lcp, m in groups if lcp >= self.min_prefix and len(m) > 1]
        pool = [c for lcp, m in groups if not (lcp >= self.min_prefix and len(m) > 1) for c in m]
        if pool:
            shared.append((0, pool))
        # 3. forward passes
        results: list[tuple[list[float], bool] | None] = [None] * len(units)
        for p, members in shared:
            self._run_group(carriers, first_needed, members, p, units, owners, results, progress)
        return results  # type: ignore[return-value]

    def _run_group(self, carriers, first_needed, members, p, units, owners, results, progress) -> None:
        torch = self.torch
        from model_subjects.kvcache import snapshot  # model_subjects.kvcache loads torch

        prefix = None
        with torch.inference_mode():
            if p:
                ids = torch.tensor([carriers[members[0]][:p]], device=self.input_device)
                out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
                prefix = snapshot(out.past_key_values)
            members = sorted(members, key=lambda c: len(carriers[c]))
            start = 0
            limit = self.sizer.max_rows
            while start < len(members):
                longest = len(carriers[members[min(len(members) - 1, start + limit - 1)]])
                rows = min(limit, max(1, self.max_batch_tokens // max(1, p + longest)))
                batch = members[start:start + rows]
                try:
                    self._run_batch(carriers, first_needed, batch, p, prefix, units, owners, results)
                except RuntimeError as exc:  # torch.OutOfMemoryError is a RuntimeError
                    if "out of memory" not in str(exc).lower() or rows == 1:
                        raise
                    limit = max(1, rows // 2)  # back off and retry the same rows in smaller batches
                    self.oom_backoffs += 1
                    if torch.cuda.is_available():
                        torch.cuda.empty_cache()
                    continue
                start += rows
                if progress is not None:
                    progress(sum(len(owners[c]) for c in batch))

    def _run_batch(self, carriers, first_needed, batch, p, prefix, units, owners, results) -> None:
        torch = self.torch
        from model_subjects.kvcache import expanded  # model_subjects.kvcache loads torch

        suffixes = [carriers[c][p:] for c in batch]
        t = max(len(s) for s in suffixes)
        b = len(batch)
        ids = torch.full((b, t), self.pad_id, dtype=torch.long)
        mask = torch.zeros((b, p + t), dtype=torch.long)
        mask[:, :p] = 1
        left = self.padding_side == "left"
        for r, s in enumerate(suffixes):
            if left:
                ids[r, t - len(s):] = torch.tensor(s)
                mask[r, p + t - len(s):] = 1
            else:
                ids[r, : len(s)] = torch.tensor(s)
                mask[r, p: p + len(s)] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)[:, p:]
        if left:
            keep = max(len(carriers[c]) - first_needed[c] for c in batch)
        else:
            keep = t
        kwargs: dict[str, Any] = {}
        if prefix is not None:
            kwargs["past_key_values"] = expanded(prefix, b)
        out = self.model(input_ids=ids.to(self.input_device), attention_mask=mask.to(self.input_device),
                         position_ids=pos.to(self.input_device), use_cache=prefix is not None,
                         logits_to_keep=keep, **kwargs)
        logits = out.logits.float()
        logprobs = torch.log_softmax(logits, dim=-1)
        argmax = logits.argmax(dim=-1)
        for r, c in enumerate(batch):
            n = len(suffixes[r])
            # column of absolute input position q in the kept logits
            offset = keep - n - p if left else -p
            for i in owners[c]:
                u = units[i]
                start = len(u.full) - u.n_cont - 1  # position predicting the first continuation token
                targets = u.full[len(u.full) - u.n_cont:]
                cols = [start + j + offset for j in range(u.n_cont)]
                col_t = torch.tensor(cols, device=logprobs.device)
                tgt = torch.tensor(targets, device=logprobs.device)
                lps = logprobs[r, col_t, tgt].tolist()
                greedy = bool((argmax[r, col_t] == tgt).all())
                results[i] = (lps, greedy)

    # ------------------------------------------------------------------ generation
    def generate_until(self, requests: Sequence[GenerationRequest],
                       progress: Progress | None = None) -> list[str]:
        outs = []
        for req in requests:
            ctx = self.encode(req.context.rstrip(" "))
            ids = list(self.sequence_start(ctx) + ctx)
            stream = KVStream(self, start=ids)
            outs.append(stream.generate("", req.until, req.max_new_tokens, req.skip_leading_whitespace))
            if progress is not None:
                progress(1)
        return outs

    def stream(self, reuse_cache: bool = True, **kwargs: Any) -> KVStream:
        return KVStream(self, reuse_cache=reuse_cache)

    def stream_group(self, n: int) -> StreamGroup:
        """N running contexts advanced together (one forward pass per step for all of them)."""
        return StreamGroup(self, n)

    def chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"model {self.name!r} has no chat template")
        return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=add_generation_prompt)

