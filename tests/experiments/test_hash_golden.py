"""The bundled Lakretz specs keep their spec and sequence hashes across the general-model change:
sessions recorded before it stay resumable and comparable (values recorded before the change)."""
from __future__ import annotations

import pytest

from experiments.design_compiler import compile_sequence
from experiments.spec import bundled_spec_path, load_spec

GOLDEN = {
    "lakretz2021_demo": ("7c1ead8a14ac9b7b", "120dafec0937a2b5"),
    "lakretz2021_italian_example": ("a8f248a0bc6a06ec", "fdcddb6793279cdb"),
    "lakretz2021_nested": ("91d1347b4fcbc6bb", "5fe1f29c0babda64"),
    "lakretz2021_replication": ("24f55166260388ee", "adda29c8eab78bac"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_bundled_lakretz_spec_and_sequence_hashes_unchanged(name):
    exp = load_spec(bundled_spec_path(name))
    spec_hash, seq_hash = GOLDEN[name]
    assert exp.spec_hash == spec_hash
    assert compile_sequence(exp, "S01").sequence_hash == seq_hash
