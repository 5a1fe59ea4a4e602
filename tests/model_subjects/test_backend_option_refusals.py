"""`-B KEY=VALUE` (and a sweep entry's `options:`) never carry a setting that has an option of its own:
refused before any work (exit 2, one line naming the option to use), never a TypeError traceback
from the backend's `load` receiving the setting twice (`-B model=smollm2`)."""
from __future__ import annotations

import pytest
from cli_refusal import refused, tree


@pytest.mark.parametrize("item, option", [("model=smollm2", "--model"), ("dtype=bfloat16", "--dtype"),
                                          ("threads=2", "--threads"), ("add_bos=true", "--add-bos"),
                                          ("batch_size=8", "--batch-size"), ("device=cpu", "--device"),
                                          ("backend=llamacpp", "--backend")])
def test_run_model_refuses_a_backend_option_that_is_its_own_option(tmp_path, item, option):
    out = tmp_path / "s"
    msg = refused("run-model", "lakretz2021_nested", "--backend", "openai", "-B", "url=http://127.0.0.1:9",
                  "-B", item, "--out", str(out), match=[f"'{item}'", f"use {option}"])
    assert "TypeError" not in msg and not out.exists()


def test_a_backend_option_of_its_own_still_passes_the_check(tmp_path):
    """The check names own options only: a real backend setting goes on to the backend (which here
    fails to reach a closed port: a different, later error)."""
    out = tmp_path / "s"
    msg = refused("run-model", "lakretz2021_nested", "--backend", "openai", "-B", "url=http://127.0.0.1:9",
                  "-B", "retries=0", "--out", str(out), match="127.0.0.1:9", timeout=120)
    assert "option of run-model" not in msg


def test_sweep_refuses_an_own_field_among_the_options(tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"spec: lakretz2021_nested\nout: {tmp_path / 'out'}\n"
                     "models:\n  - {backend: llamacpp, options: {model: x.gguf, n_ctx: 512}}\n")
    before = tree(tmp_path)
    refused("sweep", str(sweep), "--dry-run", match=["field 'models.0.options'", "model is a field of the model entry"])
    assert tree(tmp_path) == before
