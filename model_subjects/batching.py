"""How many rows go into one forward pass: a token budget chosen for the device.

On a GPU a small fixed batch leaves the device idle (kernel launches and transfers dominate), and
a large one can run out of memory. The budget is derived from free GPU memory and the model's
per-token cost; with `batch_size="auto"` the row limit then grows while throughput still improves,
and it is halved after an out-of-memory error (the batch is retried, nothing is lost). On CPU the
default is a fixed, modest budget (large batches do not help a CPU and cost memory).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

CPU_BATCH_TOKENS = 8192  # rows x (past + new tokens) per forward pass on CPU (~0.75 GB peak, bundled model)
CPU_AUTO_ROWS = 256  # "auto" on CPU: rows are bounded by the token budget; fewer passes, less fixed cost
CPU_POOL_TOKENS = 8192  # prefix-tree keys/values kept at once on CPU
CPU_PASS_COST_TOKENS = 40  # one forward pass costs about as much as this many tokens (bundled model: 70-150 ms)
GPU_PASS_COST_TOKENS = 512  # kernel launches dominate small batches on a GPU
AUTO_START_ROWS = 32
AUTO_MAX_ROWS = 4096


def kv_bytes_per_token(config: Any, dtype_bytes: int) -> int:
    """Bytes of keys and values one token occupies over all layers."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = cfg.num_attention_heads
    n_kv = getattr(cfg, "num_key_value_heads", None) or heads
    head = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    return 2 * cfg.num_hidden_layers * n_kv * head * dtype_bytes


def activation_bytes_per_token(config: Any, dtype_bytes: int) -> int:
    """Peak activations of one token inside one layer (hidden states, attention, MLP), generous."""
    cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    inter = getattr(cfg, "intermediate_size", None) or 4 * cfg.hidden_size
    return (6 * cfg.hidden_size + 3 * inter) * dtype_bytes


@dataclass
class BatchSizer:
    """Row limit per forward pass under a token budget; grows (auto) and backs off on out-of-memory."""

    max_rows: int = 32
    max_tokens: int = CPU_BATCH_TOKENS
    pool_tokens: int = CPU_POOL_TOKENS
    adaptive: bool = False
    pass_cost_tokens: int = CPU_PASS_COST_TOKENS
    row_cap: int = AUTO_MAX_ROWS
    oom_backoffs: int = 0
    on_oom: Callable[[], None] | None = None
    _rates: dict[int, list[float]] = field(default_factory=dict)
    _frozen: bool = False

    def rows(self, todo: Sequence[Any], shape: Callable[[Any], tuple[int, int]]) -> int:
        """How many of `todo` (sorted by new length) go into the next batch; shape(x) = (past, new tokens).

        Stops at the row limit, at the token budget (rows x (past + new)), and where a longer row
        would add more padding to the rows already taken than a separate forward pass costs
        (`pass_cost_tokens`: the fixed cost of one pass, in tokens).
        """
        p = t = 0
        n = 0
        for x in todo[: self.max_rows]:
            past, new = shape(x)
            if n and new > t and n * (new - t) > self.pass_cost_tokens:
                break
            p2, t2 = max(p, past), max(t, new)
            if n and (n + 1) * (p2 + t2) > self.max_tokens:
                break
            p, t = p2, t2
            n += 1
        return max(1, n)

    def report(self, tokens: int, seconds: float) -> None:
        """Throughput of a finished batch; in auto mode the row limit doubles while it keeps improving."""
        if not self.adaptive or self._frozen or seconds <= 0:
            return
        rates = self._rates.setdefault(self.max_rows, [])
        rates.append(tokens / seconds)
        if len(rates) < 2:
            return
        now = sorted(rates)[len(rates) // 2]
        smaller = self._rates.get(self.max_rows // 2)
        if smaller and now < 1.05 * sorted(smaller)[len(smaller) // 2]:
            self.max_rows //= 2  # the larger size did not pay: go back and stay
            self._frozen = True
        elif self.max_rows * 2 <= self.row_cap:
            self.max_rows *= 2
        else:
            self._frozen = True

    def out_of_memory(self, rows: int) -> None:
        """Halve the row limit (and the token budget) after an out-of-memory error; stop growing."""
        self.max_rows = max(1, rows // 2)
        self.max_tokens = max(1, self.max_tokens // 2)
        self.oom_backoffs += 1
        self._frozen = True
        if self.on_oom is not None:
            self.on_oom()

    def describe(self) -> dict[str, Any]:
        return {"max_rows": self.max_rows, "max_tokens": self.max_tokens, "pool_tokens": self.pool_tokens,
                "adaptive": self.adaptive, "oom_backoffs": self.oom_backoffs}


def sizer_for(model: Any, device: str, batch_size: int | str, max_batch_tokens: int | None = None) -> BatchSizer:
    """The batch policy for a loaded model: from free GPU memory on CUDA, a fixed budget on CPU.

    `batch_size` is a row limit, or "auto" (CUDA: start at 32 rows and grow while throughput
    improves, within a token budget from free memory; CPU: up to 256 rows within 8192 tokens).
    """
    import torch  # torch loads only when a model runs

    auto = str(batch_size).lower() == "auto"
    rows = AUTO_START_ROWS if auto else max(1, int(batch_size))
    dtype = next(model.parameters()).dtype
    nbytes = torch.finfo(dtype).bits // 8 if dtype.is_floating_point else 4
    dev = torch.device(device) if device not in ("auto",) else next(model.parameters()).device
    if dev.type == "cuda" and torch.cuda.is_available():
        free, _total = torch.cuda.mem_get_info(dev)
        kv = kv_bytes_per_token(model.config, nbytes)
        act = activation_bytes_per_token(model.config, nbytes)
        # a batch holds its gathered past plus the cache copy with the new tokens (2 x keys/values),
        # one layer's activations, and the kept logits (small: only scored positions)
        tokens = int(0.5 * free / (2 * kv + act))
        pool = int(0.2 * free / kv)
        sizer = BatchSizer(max_rows=rows, max_tokens=max(256, max_batch_tokens or tokens),
                           pool_tokens=max(1024, pool), adaptive=auto, pass_cost_tokens=GPU_PASS_COST_TOKENS,
                           on_oom=torch.cuda.empty_cache)
        return sizer
    return BatchSizer(max_rows=CPU_AUTO_ROWS if auto else rows, max_tokens=max_batch_tokens or CPU_BATCH_TOKENS,
                      pool_tokens=CPU_POOL_TOKENS)
