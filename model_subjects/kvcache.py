"""KV caches for prefix reuse: a shared prompt encoded once, and a running history that only grows.

`GrowingLayer` keeps keys/values in a buffer with spare capacity (doubling when full), so
appending a trial costs O(new tokens) instead of the O(history) copy of `torch.cat` in
transformers' `DynamicLayer`, and cropping back a tentative query is free.
"""
from __future__ import annotations

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer


class GrowingLayer(DynamicLayer):
    """A DynamicLayer whose storage grows geometrically; `keys`/`values` are views of the filled part."""

    def __init__(self, capacity: int = 512):
        super().__init__()
        self.capacity = int(capacity)
        self.n = 0
        self._k: torch.Tensor | None = None
        self._v: torch.Tensor | None = None

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        b, h, _, d = key_states.shape
        self._k = key_states.new_empty((b, h, self.capacity, d))
        self._v = value_states.new_empty((b, h, self.capacity, value_states.shape[-1]))
        self.is_initialized = True
        self._views()

    def _views(self) -> None:
        self.keys = self._k[:, :, : self.n]
        self.values = self._v[:, :, : self.n]

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * self.capacity)
        k = self._k.new_empty(self._k.shape[:2] + (cap,) + self._k.shape[3:])
        v = self._v.new_empty(self._v.shape[:2] + (cap,) + self._v.shape[3:])
        k[:, :, : self.n] = self._k[:, :, : self.n]
        v[:, :, : self.n] = self._v[:, :, : self.n]
        self._k, self._v, self.capacity = k, v, cap

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        need = self.n + key_states.shape[-2]
        if need > self.capacity:
            self._grow(need)
        self._k[:, :, self.n : need] = key_states
        self._v[:, :, self.n : need] = value_states
        self.n = need
        self._views()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.n

    def crop(self, max_length: int) -> None:
        """Keep the first `max_length` tokens (negative: drop that many from the end)."""
        self.n = max(0, self.n + max_length) if max_length < 0 else min(self.n, max_length)
        if self.is_initialized:
            self._views()

    def reset(self) -> None:
        self.n = 0
        if self.is_initialized:
            self._views()


def growing_cache(num_layers: int, capacity: int = 512) -> DynamicCache:
    """An empty DynamicCache made of GrowingLayers (pass it as `past_key_values`)."""
    cache = DynamicCache()
    cache.layers = [GrowingLayer(capacity) for _ in range(num_layers)]
    return cache


def crop_cache(cache: DynamicCache, length: int) -> None:
    for layer in cache.layers:
        layer.crop(length)


def snapshot(cache: DynamicCache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The cached keys/values of every layer (batch 1), e.g. a few-shot prompt encoded once."""
    return [(layer.keys, layer.values) for layer in cache.layers]


def expanded(prefix: list[tuple[torch.Tensor, torch.Tensor]], batch: int) -> DynamicCache:
    """A fresh cache holding `prefix` for each of `batch` rows (the prefix itself is never modified)."""
    return DynamicCache(ddp_cache_data=[(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1))
                                        for k, v in prefix])
