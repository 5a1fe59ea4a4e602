"""Benchmark scripts (run as modules: python -m benchmarks.bench_model_forced_choice)."""
