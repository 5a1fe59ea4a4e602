"""The batch policy (no model): token budget, padding split, growth while throughput improves, OOM back-off."""
from __future__ import annotations

from types import SimpleNamespace

from model_subjects.batching import BatchSizer, activation_bytes_per_token, kv_bytes_per_token


def shape(x):
    return x  # (past, new)


def test_rows_respect_row_limit_and_token_budget():
    s = BatchSizer(max_rows=8, max_tokens=100, pass_cost_tokens=1000)
    assert s.rows([(0, 10)] * 20, shape) == 8
    assert s.rows([(15, 5)] * 20, shape) == 5  # 5 rows x (15 + 5) = 100 tokens
    assert s.rows([(500, 5)], shape) == 1  # a row larger than the budget still runs alone


def test_a_longer_row_starts_a_new_batch_when_its_padding_costs_more_than_a_pass():
    s = BatchSizer(max_rows=100, max_tokens=10**6, pass_cost_tokens=24)
    todo = [(0, 3)] * 30 + [(0, 4)] * 5
    assert s.rows(todo, shape) == 30  # 30 rows x 1 padding token > 24
    s.pass_cost_tokens = 40
    assert s.rows(todo, shape) == 35


def test_auto_grows_while_throughput_improves_then_stays():
    s = BatchSizer(max_rows=32, adaptive=True, row_cap=1024)
    for rate in (100, 100):  # tokens/s at 32 rows
        s.report(rate, 1.0)
    assert s.max_rows == 64
    for rate in (180, 180):  # better: grow again
        s.report(rate, 1.0)
    assert s.max_rows == 128
    for rate in (185, 185):  # < 5% better than 64 rows: back to 64, and stay
        s.report(rate, 1.0)
    assert s.max_rows == 64
    s.report(10_000, 1.0)
    s.report(10_000, 1.0)
    assert s.max_rows == 64


def test_out_of_memory_halves_and_stops_growing():
    called = []
    s = BatchSizer(max_rows=64, max_tokens=8000, adaptive=True, on_oom=lambda: called.append(1))
    s.out_of_memory(64)
    assert (s.max_rows, s.max_tokens, s.oom_backoffs, called) == (32, 4000, 1, [1])
    s.report(1, 1.0)
    s.report(1, 1.0)
    assert s.max_rows == 32


def test_per_token_sizes_follow_the_config():
    cfg = SimpleNamespace(num_attention_heads=32, num_key_value_heads=8, hidden_size=4096, num_hidden_layers=32,
                          intermediate_size=14336)
    assert kv_bytes_per_token(cfg, 2) == 2 * 32 * 8 * 128 * 2  # 128 KiB per token for Llama-3-8B in bf16
    assert activation_bytes_per_token(cfg, 2) > 4096 * 2
