"""Install a toy task kind the way a third party's package is installed (test support).

A toy kind is one folder under tests/support/kinds/ (a package). `installed(name, tmp)` puts that folder on the
path and writes the entry point a package's metadata would carry (`[twinlab.kinds] <name> = <name>`, in a
`*.dist-info` folder of a temporary site folder on the path), so twinlab's one registry of kinds
(experiments/kinds.py) discovers it; on leaving, both go and the registry forgets the kind. `pythonpath`
gives a child process the same (run-human in its own process). Nothing in twinlab names a toy kind.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import yaml

KINDS = Path(__file__).resolve().parent / "kinds"


def site_folder(name: str, tmp: Path) -> Path:
    """A temporary site folder holding the toy package's metadata: its entry point in `twinlab.kinds`."""
    site = tmp / f"site-{name}"
    meta = site / f"twinlab_toy_{name}-0.0.dist-info"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: twinlab-toy-{name}\nVersion: 0.0\n", encoding="utf-8")
    (meta / "entry_points.txt").write_text(f"[twinlab.kinds]\n{name} = {name}\n", encoding="utf-8")
    return site


def pythonpath(name: str, tmp: Path) -> str:
    """PYTHONPATH entries (before the repository's) under which a child process finds the toy kind."""
    return f"{site_folder(name, tmp)}:{KINDS}"


@contextmanager
def installed(name: str, tmp: Path) -> Iterator[None]:
    from experiments.kinds import refresh

    paths = [str(site_folder(name, tmp)), str(KINDS)]
    sys.path[:0] = paths
    refresh()
    try:
        yield
    finally:
        for p in paths:
            sys.path.remove(p)
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]
        refresh()


ITEMS = ["1,c,red,colour", "1,o,table,other", "2,c,blue,colour", "2,o,chair,other",
         "3,c,green,colour", "3,o,spoon,other", "4,c,pink,colour", "4,o,house,other"]


def toy_spec(tmp: Path, task: dict | None = None, **timing: float) -> Path:
    """A design spec of the toy kind (its own setting `colour_text` given) with short timings."""
    (tmp / "items.csv").write_text("item,colourness,sentence,answer\n" + "\n".join(ITEMS) + "\n", encoding="utf-8")
    data = {"name": "toy", "seed": 1, "design": {"file": "items.csv", "factors": {"colourness": ["c", "o"]},
                                                 "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": True}],
            "timing": {"fixation_ms": 150, "word_ms": 100, "gap_ms": 50, "response_ms": 1000, "feedback_ms": 150,
                       "iti_ms": 80, **timing},
            "task": task or {"kind": "colour_toy", "colour_text": "A colour", "question": "Colour?"},
            "texts": {"instructions": ["Colour or not?"]}}
    p = tmp / "toy.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p
