"""What an earlier import left in --out, so that new files add sessions without touching the earlier ones.

The design read from the data is every person's list, so a new person is a new list and the spec hash
changes. Each earlier person keeps their list number (read from their session's sidecar); new people get
the numbers after them. With `--add`, an earlier session is left byte for byte as it is ("kept") when its
person's trials compile, under the extended spec, to exactly the trials its own spec compiled (the same
items, order, materials, blocks and feedback: `Trial.hashed_dict`), the spec's task, factors and blocks are
unchanged and its source files are the same bytes; the earlier version of the spec stays loadable in
OUT/spec/versions/<spec_hash>/ (a kept session names it). Anything else is refused, naming the session.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from experiments.design_compiler import compile_sequence
from experiments.session import keyword_value
from experiments.spec import SpecError, load_spec
from participants.imports.records import ImportInputError

VERSIONS = "versions"


@dataclass
class Earlier:
    """The earlier import of this study in --out: its sessions' people and lists, and its specs by hash."""
    out: Path
    name: str
    lists: dict[str, int] = field(default_factory=dict)       # participant (as the source wrote it) -> list
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)   # participant -> sidecar
    specs: dict[str, Any] = field(default_factory=dict)       # spec_hash -> Experiment (loaded when asked)

    def spec(self, spec_hash: str) -> Any:
        """The earlier spec of this hash: OUT/spec/<name>.yaml, else OUT/spec/versions/<hash>/ (None: neither)."""

        if spec_hash not in self.specs:
            self.specs[spec_hash] = None
            for path in (self.out / "spec" / f"{self.name}.yaml",
                         self.out / "spec" / VERSIONS / spec_hash / f"{self.name}.yaml"):
                try:
                    exp = load_spec(path) if path.is_file() else None
                except SpecError:
                    exp = None
                if exp is not None and exp.spec_hash == spec_hash:
                    self.specs[spec_hash] = exp
                    break
        return self.specs[spec_hash]


def read_earlier(out: Path, name: str) -> Earlier:
    """The sessions an earlier import of study `name` wrote in `out` (none: an empty Earlier)."""
    found = Earlier(out, name)
    data = out / "data"
    if not data.is_dir():
        return found

    for side in sorted(data.glob(f"study-{keyword_value(name)}_subject-*_session-1_data.json")):
        try:
            meta = json.loads(side.read_text(encoding="utf-8"))
            who = str(meta["participant_info"]["participant"])
            k = int(meta["list_assignment"]["list"])
        except (OSError, ValueError, KeyError, TypeError):
            continue   # not an imported session: the writing step refuses to touch it without --force
        found.lists[who] = k
        found.sessions[who] = meta
    return found


def keep_lists(people: list[Any], earlier: Earlier) -> None:
    """Earlier people keep their list numbers; new people (in the natural order of their ids) come after."""
    if not earlier.lists:
        return
    top = max(earlier.lists.values())
    for p in people:
        if p.participant in earlier.lists:
            p.list_number = earlier.lists[p.participant]
    for p in people:
        if p.participant not in earlier.lists:
            top += 1
            p.list_number = top
    people.sort(key=lambda q: q.list_number)


def require_everyone(people: list[Any], earlier: Earlier) -> None:
    """The design is read from every person's files: an earlier person whose files are not given is refused."""
    given = {p.participant for p in people}
    missing = sorted(set(earlier.lists) - given)
    if missing:
        raise ImportInputError(f"{earlier.out}: {len(missing)} earlier imported participant(s) "
                               f"({', '.join(missing[:5])}) "
                               "are not in the files given; the design is read from every person's files: give "
                               "the earlier files too, with the new ones")


def same_design(old: Any, new: Any) -> Optional[str]:
    """Why the extended spec means something else for an earlier person (None: only lists were added)."""
    for what, a, b in (("task", old.task.model_dump(), new.task.model_dump()),
                       ("factors", old.design.factors, new.design.factors),
                       ("blocks", [bl.model_dump() for bl in old.blocks], [bl.model_dump() for bl in new.blocks])):
        if a != b:
            return f"the spec's {what} changed ({_short(a)} -> {_short(b)})"
    return None


def _short(x: Any) -> str:
    text = json.dumps(x, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def kept_reason(earlier: Earlier, new_exp: Any, person: Any, files: list[dict[str, Any]]) -> Optional[str]:
    """None when the person's earlier session may stay as it is under the extended spec; else why not."""

    meta = earlier.sessions.get(person.participant)
    if meta is None:
        return "it was not written by an import"
    if [f["sha256"] for f in meta.get("imported", {}).get("source_files", [])] != [f["sha256"] for f in files]:
        return "its source files differ from the files given now"
    if meta.get("status") != "completed":
        return f"it is {meta.get('status')!r}, not completed"
    old = earlier.spec(str(meta.get("spec_hash")))
    if old is None:
        return (f"its spec (spec hash {meta.get('spec_hash')}) is neither OUT/spec/{earlier.name}.yaml nor in "
                f"OUT/spec/{VERSIONS}/")
    why = same_design(old, new_exp)
    if why:
        return why
    before = compile_sequence(old, person.subject_id, list_number=person.list_number)
    now = compile_sequence(new_exp, person.subject_id, list_number=person.list_number)
    if before.sequence_hash != meta.get("sequence_hash") or \
            [t.hashed_dict() for t in before] != [t.hashed_dict() for t in now]:
        return "its list compiles to other trials under the extended spec"
    return None
