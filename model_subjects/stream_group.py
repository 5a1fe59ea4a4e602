"""Running subjects advancing together: one forward pass per step for all of them.

Each member is a running context as in `KVStream` (its own committed history, its own answers and
feedback), but all members live in one batched KV cache: row i holds member i. A step runs every
member's new tokens (the last answer and feedback, the next prompt) in one forward pass; rows
are left-padded within the step, and every member's tokens keep their true positions (explicit
position ids), so padding columns are holes that the attention mask hides forever. A query's
tokens that are not committed afterwards become holes too; trailing columns that are holes in
every row are reclaimed. The scores equal one-member-at-a-time scoring up to float rounding.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from model_subjects.kv_stream import TorchLM
from model_subjects.requests import LoglikelihoodResult


@dataclass
class _Member:
    ids: list[int]  # committed tokens
    cols: list[int] = field(default_factory=list)  # cache column of each cached token, in order
    n_valid: int = 0  # committed tokens that are in the cache
    tentative: tuple[int, ...] = ()  # query tokens cached after the committed ones
    segments: list[str] = field(default_factory=list)


class StreamGroup:
    """N growing contexts on one batched KV cache (the transformers backend's `stream_group`)."""

    def __init__(self, backend: TorchLM, n: int, capacity: int = 1024):
        from model_subjects.kvcache import growing_cache  # model_subjects.kvcache loads torch

        self.b = backend
        self.torch = backend.torch
        self.n = int(n)
        self.members = [_Member(list(backend.prefix_ids)) for _ in range(self.n)]
        self.cache = growing_cache(backend.num_layers, capacity)
        self.mask = self.torch.zeros((self.n, capacity), dtype=self.torch.long, device=backend.input_device)
        self.ncols = 0
        self.tokens_run = 0  # row x column slots run (padding included), for benchmarks
        self.forward_calls = 0

    # ------------------------------------------------------------------ committed text
    def extend(self, i: int, text: str) -> None:
        m = self.members[i]
        seg = self.b.encode(text)
        if m.tentative and seg[: len(m.tentative)] == m.tentative:
            m.n_valid += len(m.tentative)
        else:
            self._crop(i, m.n_valid)
        m.tentative = ()
        m.ids.extend(seg)
        m.segments.append(text)

    def text(self, i: int) -> str:
        return "".join(self.members[i].segments)

    # ------------------------------------------------------------------ cache bookkeeping
    def _crop(self, i: int, keep: int) -> None:
        m = self.members[i]
        if len(m.cols) > keep:
            drop = self.torch.tensor(m.cols[keep:], device=self.mask.device)
            self.mask[i, drop] = 0
            del m.cols[keep:]

    def _reclaim(self) -> None:
        """Drop trailing columns that no row uses."""
        used = max((m.cols[-1] + 1 for m in self.members if m.cols), default=0)
        if used < self.ncols:
            from model_subjects.kvcache import crop_cache  # model_subjects.kvcache loads torch

            self.mask[:, used:self.ncols] = 0
            crop_cache(self.cache, used)
            self.ncols = used

    def _reserve_mask(self, cols: int) -> None:
        """Grow the shared attention mask (doubling) so it holds at least `cols` columns."""
        if cols > self.mask.shape[1]:
            grown = self.torch.zeros((self.n, max(2 * self.mask.shape[1], cols)), dtype=self.torch.long,
                                     device=self.b.input_device)
            grown[:, :self.ncols] = self.mask[:, :self.ncols]
            self.mask = grown

    def _step(self, new: dict[int, Sequence[int]]) -> dict[int, Any]:
        """One forward pass over every member's new tokens; the next-token log-probs of each given member."""
        torch = self.torch
        dev = self.b.input_device
        T = max(len(t) for t in new.values())
        C = self.ncols
        self._reserve_mask(C + T)
        ids = torch.full((self.n, T), self.b.pad_id, dtype=torch.long)
        pos = torch.zeros((self.n, T), dtype=torch.long)
        for i, toks in new.items():
            m = self.members[i]
            k = len(toks)
            if not k:
                continue
            ids[i, T - k:] = torch.tensor(list(toks))
            pos[i, T - k:] = torch.arange(len(m.cols), len(m.cols) + k)
            m.cols.extend(range(C + T - k, C + T))
            self.mask[i, C + T - k: C + T] = 1
        self.ncols = C + T
        out = self.b.model(input_ids=ids.to(dev), attention_mask=self.mask[:, : C + T], position_ids=pos.to(dev),
                           past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        self.tokens_run += self.n * T
        self.forward_calls += 1
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1)  # (members, vocab), on the device

    # ------------------------------------------------------------------ queries
    def loglikelihood(self, queries: dict[int, tuple[str, Sequence[str]]]) -> dict[int, list[LoglikelihoodResult]]:
        """Score each member's continuations after its committed text + context, all members together."""
        torch = self.torch
        plans = {i: [self.b.encode_pair(ctx, c) for c in conts] for i, (ctx, conts) in queries.items()}
        results: dict[int, list[Any]] = {i: [None] * len(p) for i, p in plans.items()}
        ctx_lists = {i: list(dict.fromkeys(c for c, _ in p)) for i, p in plans.items()}
        with torch.inference_mode():
            for r in range(max(len(v) for v in ctx_lists.values())):
                active = {i: v[r] for i, v in ctx_lists.items() if r < len(v)}
                new: dict[int, Sequence[int]] = {}
                for i, ctx in active.items():
                    m = self.members[i]
                    full = m.ids + list(ctx)
                    if not full:
                        full = [self.b.start_id]
                        m.ids = full[:]
                    keep = min(m.n_valid, len(full) - 1)
                    self._crop(i, keep)
                    new[i] = full[keep:]
                    m.n_valid = min(len(m.ids), len(full))
                    m.tentative = tuple(full[len(m.ids):])
                lp0 = self._step(new)
                bases = {i: len(self.members[i].cols) for i in active}
                multi: list[tuple[int, int, tuple[int, ...]]] = []
                wanted = [(i, j, cont) for i, ctx in active.items() for j, (c, cont) in enumerate(plans[i]) if c == ctx]
                rows = torch.tensor([i for i, _, _ in wanted], device=lp0.device)
                firsts = torch.tensor([cont[0] for _, _, cont in wanted], device=lp0.device)
                # one device->host transfer for the step: first-token log-probs and argmax flags
                vals = torch.stack([lp0[rows, firsts].double(), (lp0[rows].argmax(-1) == firsts).double()], 1)
                for (i, j, cont), (v, hit) in zip(wanted, vals.cpu().tolist(), strict=False):
                    results[i][j] = ([v], bool(hit))
                    if len(cont) > 1:
                        multi.append((i, j, cont))
                # multi-token continuations: round k extends each member by its k-th such option
                while multi:
                    taken: dict[int, tuple[int, tuple[int, ...]]] = {}
                    rest = []
                    for i, j, cont in multi:
                        (rest.append((i, j, cont)) if i in taken else taken.__setitem__(i, (j, cont)))
                    multi = rest
                    self._extra_tokens(taken, results)
                    for i in taken:
                        self._crop(i, bases[i])
                    self._reclaim()
        out: dict[int, list[LoglikelihoodResult]] = {}
        for i, res in results.items():
            out[i] = []
            for (lps, greedy), (_, cont) in zip(res, plans[i], strict=False):
                out[i].append(LoglikelihoodResult(float(sum(lps)), bool(greedy), len(cont), tuple(lps)))
        return out

    def _extra_tokens(self, taken: dict[int, tuple[int, tuple[int, ...]]], results: dict[int, list[Any]]) -> None:
        """Log-probs of tokens 2.. of one continuation per member (all positions of the step are kept)."""
        torch = self.torch
        dev = self.b.input_device
        T = max(len(cont) - 1 for _, cont in taken.values())
        C = self.ncols
        self._reserve_mask(C + T)
        ids = torch.full((self.n, T), self.b.pad_id, dtype=torch.long)
        pos = torch.zeros((self.n, T), dtype=torch.long)
        for i, (_, cont) in taken.items():
            m = self.members[i]
            k = len(cont) - 1
            ids[i, :k] = torch.tensor(list(cont[:-1]))  # right-padded: column t predicts token t+1
            pos[i, :k] = torch.arange(len(m.cols), len(m.cols) + k)
            m.cols.extend(range(C, C + k))
            self.mask[i, C: C + k] = 1
        self.ncols = C + T
        out = self.b.model(input_ids=ids.to(dev), attention_mask=self.mask[:, : C + T], position_ids=pos.to(dev),
                           past_key_values=self.cache, use_cache=True)
        self.tokens_run += self.n * T
        self.forward_calls += 1
        lp = torch.log_softmax(out.logits.float(), dim=-1)
        for i, (j, cont) in taken.items():
            k = len(cont) - 1
            tgt = torch.tensor(list(cont[1:]), device=lp.device)
            more = lp[i, torch.arange(k, device=lp.device), tgt]
            lps, greedy = results[i][j]
            lps += more.double().cpu().tolist()
            greedy = greedy and bool((lp[i, :k].argmax(-1) == tgt).all())
            results[i][j] = (lps, greedy)
