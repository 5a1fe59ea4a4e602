"""Scoring over a prefix tree of all requests: every shared token prefix is encoded once.

Templated stimuli share their openings ("The actor that the ..."), and a few-shot prompt is
shared by every item. The input sequences of all requests are put in a compacted trie (a radix
tree): a node holds a run of tokens that every sequence below it shares. Nodes are encoded level
by level; a node's forward pass reads the keys/values of its ancestors from a pool (gathered per
row, left-padded, masked) and writes its own keys/values to the pool for its children. Each
distinct (prefix, token) is thus run through the model once, and logits are computed only at the
positions that predict a scored token.

The result equals the plain per-item forward pass (explicit positions and masks; float32 agrees
to ~1e-5, tested).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from model_subjects.batching import BatchSizer


@dataclass
class Node:
    """A run of tokens [start, end) shared by every sequence below this node."""

    start: int
    end: int
    parent: int  # -1: a child of the (empty) root
    seq: int  # a sequence that passes through this node (its tokens are seq[start:end])
    children: int = 0
    level: int = 0
    need: int = 0  # how many of the node's last positions need logits
    slot: int = -1  # first pool slot of the node's keys/values (-1: a leaf, not stored)


@dataclass
class Tree:
    seqs: list[tuple[int, ...]]
    nodes: list[Node] = field(default_factory=list)
    terminal: list[int] = field(default_factory=list)  # node where each sequence ends

    @property
    def n_tokens(self) -> int:
        """Tokens run through the model (each distinct prefix once)."""
        return sum(n.end - n.start for n in self.nodes)

    def node_at(self, s: int, q: int) -> int:
        """The node holding position q of sequence s."""
        k = self.terminal[s]
        while self.nodes[k].start > q:
            k = self.nodes[k].parent
        return k

    def path(self, k: int) -> list[int]:
        """Ancestors of node k, root first (k excluded)."""
        out = []
        p = self.nodes[k].parent
        while p >= 0:
            out.append(p)
            p = self.nodes[p].parent
        return out[::-1]


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def build_tree(seqs: Sequence[tuple[int, ...]]) -> Tree:
    """A compacted trie of distinct, sorted, non-empty sequences (built from adjacent common prefixes)."""
    tree = Tree(list(seqs))
    nodes = tree.nodes
    stack: list[int] = []  # nodes on the path of the previous sequence
    prev: tuple[int, ...] = ()
    for s, cur in enumerate(tree.seqs):
        if not cur or (s and cur <= prev):
            raise ValueError("build_tree needs distinct, sorted, non-empty sequences")
        lcp = _lcp(prev, cur) if s else 0
        while stack and nodes[stack[-1]].start >= lcp:
            stack.pop()
        if stack and nodes[stack[-1]].end > lcp:  # split: the upper part becomes a new node
            low = stack[-1]
            up = len(nodes)
            nodes.append(Node(nodes[low].start, lcp, nodes[low].parent, nodes[low].seq, children=1))
            nodes[low].start, nodes[low].parent = lcp, up
            stack[-1] = up
        parent = stack[-1] if stack else -1
        if lcp < len(cur):
            k = len(nodes)
            nodes.append(Node(lcp, len(cur), parent, s))
            if parent >= 0:
                nodes[parent].children += 1
            stack.append(k)
        tree.terminal.append(stack[-1])
        prev = cur
    _merge_single_children(tree)
    for k in _topological(tree.nodes):
        p = tree.nodes[k].parent
        tree.nodes[k].level = tree.nodes[p].level + 1 if p >= 0 else 0
    return tree


def _merge_single_children(tree: Tree) -> None:
    """A node with one child absorbs it (a sequence may then end inside a node): one pass fewer.

    Typical case: both alternatives of a forced choice end at the same context, and one of them
    has a second token; its one-token leaf would otherwise need a forward pass of its own.
    """
    nodes = tree.nodes
    kids: list[list[int]] = [[] for _ in nodes]
    for k, n in enumerate(nodes):
        if n.parent >= 0:
            kids[n.parent].append(k)
    alias = list(range(len(nodes)))
    alive = [True] * len(nodes)
    for k in _topological(nodes):
        if not alive[k]:
            continue
        while len(kids[k]) == 1:
            c = kids[k][0]
            nodes[k].end, nodes[k].seq = nodes[c].end, nodes[c].seq
            kids[k] = kids[c]
            for g in kids[k]:
                nodes[g].parent = k
            alias[c], alive[c] = k, False
    keep = [k for k in range(len(nodes)) if alive[k]]
    new_id = {k: i for i, k in enumerate(keep)}

    def final(k: int) -> int:
        while alias[k] != k:
            k = alias[k]
        return k

    tree.nodes = [nodes[k] for k in keep]
    for n in tree.nodes:
        n.parent = new_id[n.parent] if n.parent >= 0 else -1
        n.children = 0
    for n in tree.nodes:
        if n.parent >= 0:
            tree.nodes[n.parent].children += 1
    tree.terminal = [new_id[final(t)] for t in tree.terminal]


def _topological(nodes: list[Node]) -> list[int]:
    """Node ids, parents before children (a split can append a parent after its child)."""
    order, seen = [], [False] * len(nodes)
    for k in range(len(nodes)):
        chain = []
        while k >= 0 and not seen[k]:
            chain.append(k)
            seen[k] = True
            k = nodes[k].parent
        order.extend(reversed(chain))
    return order


@dataclass
class Entry:
    """One scored token: result slot (unit, j), its node and local column, and the target token."""

    unit: int
    j: int
    node: int
    col: int
    target: int


def plan_chunks(seqs: list[tuple[int, ...]], max_tokens: int) -> list[list[int]]:
    """Split sorted sequences into runs whose trie holds at most ~max_tokens tokens (bounds the pool)."""
    chunks: list[list[int]] = []
    cur: list[int] = []
    size = 0
    prev: tuple[int, ...] = ()
    for s, seq in enumerate(seqs):
        new = len(seq) - (_lcp(prev, seq) if cur else 0)
        if cur and size + new > max_tokens:
            chunks.append(cur)
            cur, size, new = [], 0, len(seq)
        cur.append(s)
        size += new
        prev = seq
    if cur:
        chunks.append(cur)
    return chunks


class TreeScorer:
    """Runs a prefix tree through a transformers causal LM (the backend supplies model and settings)."""

    def __init__(self, backend: Any, sizer: "BatchSizer"):
        self.b = backend
        self.torch = backend.torch
        self.sizer = sizer
        self.tokens_run = 0  # tokens through the model in the last call (for tests and benchmarks)
        self.forward_calls = 0

    def score_units(self, fulls: list[tuple[int, ...]], n_conts: list[int],
                    progress: Callable[[int], None] | None = None) -> list[tuple[list[float], bool]]:
        """Token log-probs of the last n_conts[i] tokens of fulls[i], and whether all are the argmax."""
        self.tokens_run = 0
        self.forward_calls = 0
        inputs = [f[:-1] for f in fulls]
        distinct = sorted(set(inputs))
        index = {s: i for i, s in enumerate(distinct)}
        by_seq: dict[int, list[int]] = {}
        for u, inp in enumerate(inputs):
            by_seq.setdefault(index[inp], []).append(u)
        lps: list[list[float]] = [[0.0] * n for n in n_conts]
        greedy = [True] * len(fulls)
        for chunk in plan_chunks(distinct, self.sizer.pool_tokens):
            tree = build_tree([distinct[s] for s in chunk])
            entries: list[Entry] = []
            for local, s in enumerate(chunk):
                for u in by_seq[s]:
                    full, n = fulls[u], n_conts[u]
                    first = len(full) - n - 1
                    for j in range(n):
                        q = first + j
                        k = tree.node_at(local, q)
                        node = tree.nodes[k]
                        node.need = max(node.need, node.end - q)
                        entries.append(Entry(u, j, k, q - node.start, full[q + 1]))
            self._run_tree(tree, entries, lps, greedy, by_seq, chunk, progress)
        return [(lps[u], greedy[u]) for u in range(len(fulls))]

    # ------------------------------------------------------------------ forward passes
    def _run_tree(self, tree: Tree, entries: list[Entry], lps, greedy, by_seq, chunk, progress) -> None:
        torch = self.torch
        nodes = tree.nodes
        slots = 1  # slot 0: an all-zero key/value for padding
        for n in nodes:
            if n.children:
                n.slot = slots
                slots += n.end - n.start
        pool = self._new_pool(slots) if slots > 1 else None
        by_node: dict[int, list[Entry]] = {}
        for e in entries:
            by_node.setdefault(e.node, []).append(e)
        # how many units finish at each node (for progress)
        finishing: dict[int, int] = {}
        if progress is not None:
            for local, s in enumerate(chunk):
                finishing[tree.terminal[local]] = finishing.get(tree.terminal[local], 0) + len(by_seq[s])
        # inner nodes level by level (a node needs its parent's keys/values); leaves need nothing after
        # them, so all of them wait for one last phase, batched by length across levels (fewer passes)
        levels: dict[int, list[int]] = {}
        last = 1 + max((n.level for n in nodes if n.children), default=-1)
        for k, n in enumerate(nodes):
            levels.setdefault(n.level if n.children else last, []).append(k)
        with torch.inference_mode():
            for lev in sorted(levels):
                todo = sorted(levels[lev], key=lambda k: (nodes[k].end - nodes[k].start, nodes[k].start))
                start = 0
                while start < len(todo):
                    rows = self.sizer.rows(todo[start:], lambda k: (nodes[k].start, nodes[k].end - nodes[k].start))
                    batch = todo[start:start + rows]
                    try:
                        t0 = time.perf_counter()
                        self._run_batch(tree, batch, pool, by_node, lps, greedy)
                        self.sizer.report(sum(nodes[k].end - nodes[k].start for k in batch), time.perf_counter() - t0)
                    except RuntimeError as exc:  # torch.OutOfMemoryError is a RuntimeError
                        if "out of memory" not in str(exc).lower() or rows == 1:
                            raise
                        self.sizer.out_of_memory(rows)
                        continue
                    start += rows
                    if progress is not None:
                        done = sum(finishing.get(k, 0) for k in batch)
                        if done:
                            progress(done)

    def _new_pool(self, slots: int) -> list[tuple[Any, Any]]:
        torch = self.torch
        cfg = self.b.model.config.get_text_config()
        n_kv = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        dtype = next(self.b.model.parameters()).dtype
        dev = self.b.input_device
        return [(torch.zeros((slots, n_kv, head), dtype=dtype, device=dev),
                 torch.zeros((slots, n_kv, head), dtype=dtype, device=dev)) for _ in range(self.b.num_layers)]

    def _run_batch(self, tree: Tree, batch: list[int], pool, by_node, lps, greedy) -> None:
        from transformers.cache_utils import DynamicCache  # transformers loads only when a model runs

        torch = self.torch
        nodes = tree.nodes
        dev = self.b.input_device
        b = len(batch)
        lens = [nodes[k].end - nodes[k].start for k in batch]
        pasts = [nodes[k].start for k in batch]
        T, P = max(lens), max(pasts)
        ids = torch.full((b, T), self.b.pad_id, dtype=torch.long)
        mask = torch.zeros((b, P + T), dtype=torch.long)
        pos = torch.zeros((b, T), dtype=torch.long)
        gather = torch.zeros((b, P), dtype=torch.long) if P else None
        for r, k in enumerate(batch):
            n = nodes[k]
            ids[r, T - lens[r]:] = torch.tensor(tree.seqs[n.seq][n.start:n.end])
            mask[r, P - n.start: P] = 1
            mask[r, P + T - lens[r]:] = 1
            pos[r, T - lens[r]:] = torch.arange(n.start, n.end)
            if n.start:
                idx: list[int] = []
                for a in tree.path(k):
                    an = nodes[a]
                    idx.extend(range(an.slot, an.slot + an.end - an.start))
                gather[r, P - n.start:] = torch.tensor(idx)
        kwargs: dict[str, Any] = {}
        if P:
            g = gather.to(dev)
            kwargs["past_key_values"] = DynamicCache(ddp_cache_data=[
                (pk[g].permute(0, 2, 1, 3), pv[g].permute(0, 2, 1, 3)) for pk, pv in pool])
        keep = max(1, max(nodes[k].need for k in batch))
        store = [r for r, k in enumerate(batch) if nodes[k].children]
        out = self.b.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev),
                           use_cache=bool(store), logits_to_keep=keep, **kwargs)
        self.tokens_run += sum(lens)
        self.forward_calls += 1
        if store:
            rr, cc, ss = [], [], []
            for r in store:
                n = nodes[batch[r]]
                rr += [r] * lens[r]
                cc += range(P + T - lens[r], P + T)
                ss += range(n.slot, n.slot + lens[r])
            rr_t, cc_t, ss_t = (torch.tensor(x, device=dev) for x in (rr, cc, ss))
            for (pk, pv), layer in zip(pool, out.past_key_values.layers, strict=False):
                pk[ss_t] = layer.keys[rr_t, :, cc_t]
                pv[ss_t] = layer.values[rr_t, :, cc_t]
        es = [(r, e) for r, k in enumerate(batch) for e in by_node.get(k, ())]
        if not es:
            return
        er = torch.tensor([r for r, _ in es], device=dev)
        ec = torch.tensor([keep - lens[r] + e.col for r, e in es], device=dev)
        et = torch.tensor([e.target for _, e in es], device=dev)
        logits = out.logits[er, ec].float()  # only the scored positions, (entries, vocab)
        lp = torch.log_softmax(logits, dim=-1).gather(1, et[:, None])[:, 0]
        hit = logits.argmax(-1) == et
        values = torch.stack([lp.double(), hit.double()], 1).cpu().tolist()  # one device->host transfer
        for (_, e), (v, h) in zip(es, values, strict=False):
            lps[e.unit][e.j] = v
            if not h:
                greedy[e.unit] = False
