"""Compiled trials: the frozen, hashed sequence that humans and model subjects both receive."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from types import ModuleType
from typing import Any, Collection, Iterator, Mapping

from experiments.schema import table_columns
from experiments.studies import declared, study_names, study_part
from experiments.tasks.detection import settled_detection


def records() -> tuple[ModuleType, ...]:
    """The registered trial records (a study's `TRIAL_RECORD`: the module of the study that holds it), in
    the studies' listing order: the columns a trial's flat and hashed record carries beyond the general
    model's fields (for the Lakretz study, studies/lakretz2021/materials.py)."""

    return _records(study_names())


@lru_cache(maxsize=4)
def _records(names: tuple[str, ...]) -> tuple[ModuleType, ...]:
    return tuple(study_part(name, part) for name, part in declared("TRIAL_RECORD").items())


def record_keys() -> tuple[str, ...]:
    """Every registered record's keys, in order (the flat record's columns between the ids and the general
    model's fields)."""
    return tuple(dict.fromkeys(k for r in records() for k in r.KEYS))


def _record_named(keys: set[str]) -> ModuleType:
    """The registered record these keys belong to (the one sharing most of them: its `materials` refuses
    a missing or unknown key); TypeError when no study registers a record."""
    recs = records()
    if not recs:
        raise TypeError("no study registers a trial record (a study's TRIAL_RECORD): a trial of a record "
                        "cannot be built")
    return max(recs, key=lambda r: len(keys & set(r.KEYS)))


def condition_label(levels: tuple[str, ...]) -> str:
    """A design's condition: its factor levels joined with "-" (the table's `condition`, the rows' ids)."""
    return "-".join(levels)


@dataclass(frozen=True)
class Trial:
    """One trial as every runner sees it: ids, its place in the session, the item and its list, role and
    factor levels, the task kind and the materials that kind needs (docs/general_model/trial.md "Trial").

    A trial of a study's own cells (a Lakretz trial; build it with `Trial.of_record`) holds that study's
    registered trial record (`records()`: a study's `TRIAL_RECORD`) as its materials. The record's columns
    are the study's: read them through its record adapter (`study_record`, the adapter's typed view), write
    them through it (`to_row`); this class names none of them and imports no study.
    """

    experiment: str
    block: str
    trial_index: int  # 0-based position in the whole session
    block_trial_index: int  # 0-based position inside its block
    item_id: str
    feedback: bool  # the block gives feedback after this trial
    # Defaults mean "a trial of a study's record": they are left out of the hashed JSON while they hold their
    # defaults, so a study's specs keep their hashes.
    item: str = ""  # the item group (one lexical item across its conditions); "" for a record's trials
    list_number: int | None = None  # the counterbalanced list this subject's trials come from (1-based)
    factors: tuple[tuple[str, str], ...] = ()  # the design's factors: (name, level), in the spec's order
    task: str = ""  # task kind (experiments.tasks); "" = the spec's task
    role: str = ""  # test, filler or practice ("" for a record's trials)
    materials: tuple[tuple[str, Any], ...] = ()  # what the task needs: sentence, options, target, ... or a
    # registered trial record (`records()`) (JSON values, lists as tuples)

    @classmethod
    def of_record(cls, *, experiment: str, block: str, trial_index: int, block_trial_index: int, item_id: str,
                  feedback: bool, **record: Any) -> "Trial":
        """A trial of a registered record; `record`: every key of that record (its adapter's `KEYS`)."""
        return cls(experiment=experiment, block=block, trial_index=trial_index,
                   block_trial_index=block_trial_index, item_id=item_id, feedback=feedback,
                   materials=_record_named(set(record)).materials(**record))

    # ---- a study's record, through the study's record adapter ---------------------------------------------
    @property
    def record_module(self) -> ModuleType | None:
        """The registered record adapter the trial's materials are (None: a trial of a general design)."""
        return next((r for r in records() if r.is_record(self.materials)), None)

    def record(self) -> dict[str, Any]:
        """The record's columns: a record trial's materials, or the values the registered records give a
        general design's trial in its hashed record (each adapter's `design_values`)."""
        if self.record_module is not None:
            return dict(self.materials)
        out: dict[str, Any] = {}
        for r in records():
            out.update(r.design_values(self.experiment, self.factors, self.task, self.role, self.mat))
        return out

    @property
    def study_record(self) -> Any:
        """The record adapter's typed view of this trial's record (a Lakretz trial's cell, critical word, forms
        and answer key: studies/lakretz2021/materials.py `Record`); a general design's trial gets the view of
        the values its hashed record holds. TypeError when no study registers a record."""
        adapter = self.record_module or next(iter(records()), None)
        if adapter is None:
            raise TypeError("no study registers a trial record (a study's TRIAL_RECORD)")
        return adapter.view(self.record())

    def with_materials(self, **changes: Any) -> "Trial":
        """A copy with some materials changed (a record trial: some of its record's keys)."""
        rec = self.record_module
        if rec is not None:
            return replace(self, materials=rec.materials(**{**self.mat, **changes}))
        return replace(self, materials=freeze_pairs({**self.mat, **changes}))

    # ---- the general model's reading of a trial ---------------------------------------------------------------
    @property
    def words(self) -> tuple[str, ...]:
        """The units as presented: a record's units, else the item's sentence (or prefix) split at spaces."""
        if self.record_module is not None:
            return tuple(self.mat["words"])
        return tuple(str(self.mat.get("sentence") or self.mat.get("prefix") or "").split())

    @property
    def condition(self) -> str:
        """The trial's condition: a record's own, else the design's factor `condition`, its levels joined, or
        (factor-less) its role."""
        if self.record_module is not None:
            return str(self.mat["condition"])
        levels = dict(self.factors)
        return levels.get("condition", condition_label(tuple(levels.values())) if levels else self.role)

    @property
    def factor_levels(self) -> dict[str, str]:
        return dict(self.factors)

    @property
    def mat(self) -> dict[str, Any]:
        """The materials as a dict (keys: see docs/general_model.md)."""
        return dict(self.materials)

    @property
    def sentence(self) -> str:
        return " ".join(self.words)

    def grammatical_claim(self, detection: tuple[str, str] | None = None) -> bool | None:
        """What the `grammatical` column may say of a general design's trial: the item's answer for
        judgment-like kinds (True when it is the accepting value of `detection`, by default the kind's settled
        pair, False when the rejecting one; experiments.tasks.detection_values), else None: no column claims a
        value the items do not give (a declared factor `grammatical` fills the column in `to_row`)."""
        if detection is None:
            detection = settled_detection(self.task)
        answer = self.mat.get("answer")
        if detection is None or answer is None:
            return None
        return {detection[0]: True, detection[1]: False}.get(str(answer).strip())

    def flat_dict(self) -> dict[str, Any]:
        """Every column of the trial in the order of the flat record sessions store (the record's keys
        in place, then the general model's fields), as `asdict` of the flat dataclass gave it."""
        d: dict[str, Any] = {k: getattr(self, k) for k in BASE_FIELDS}
        after = {r.FEEDBACK_AFTER for r in records()}
        for k, v in self.record().items():
            d[k] = v
            if k in after:
                d["feedback"] = self.feedback
        d.setdefault("feedback", self.feedback)  # (no record registered: after the ids)
        of_record = self.record_module is not None
        for k in GENERIC_FIELDS:
            d[k] = () if k == "materials" and of_record else getattr(self, k)
        return d

    def to_row(self, detection: tuple[str, str] | None = None, columns: Collection[str] = ()) -> dict[str, Any]:
        """The trial's own columns of the trial table. A record trial: its record's columns as its adapter
        writes them (`row_columns`). A general design's trial: the general columns (`detection`: the task's
        (accepting, rejecting) values, for `grammatical`; experiments.tasks.detection_values) and its factors'
        own columns; `columns`: the session's header, where one written before a general design's tables left
        the records' columns out asks for them too (the values its earlier rows hold: a resumed session)."""
        adapter = self.record_module
        if adapter is not None:
            return {**{k: getattr(self, k) for k in BASE_FIELDS}, **adapter.row_columns(self.record(), self.feedback)}
        d: dict[str, Any] = {k: getattr(self, k) for k in BASE_FIELDS}
        answer = self.mat.get("answer", "")
        d.update(condition=self.condition, words=self.sentence,
                 correct_response=answer if isinstance(answer, str) else "", feedback=self.feedback)
        earlier = set(columns) - set(GENERAL_ROW)
        for r in records() if earlier else ():
            values = r.row_columns(r.design_values(self.experiment, self.factors, self.task, self.role, self.mat),
                                   self.feedback)
            d.update({k: v for k, v in values.items() if k in earlier})
        d["grammatical"] = self.grammatical_claim(detection)  # a declared factor overrides it below
        d.update(item=self.item, list=self.list_number, task=self.task, role=self.role,
                 materials=json.dumps(thaw(self.materials), ensure_ascii=False, sort_keys=True))
        for name, level in self.factors:  # the design's own columns, under the factors' names
            # a `grammatical` factor of true/false fills the boolean column as a boolean
            d[name] = {"true": True, "false": False}.get(level, level) if name == "grammatical" else level
        return d

    @property
    def is_generic(self) -> bool:
        """A trial of the general model (items, factors, task) rather than a trial of a study's record."""
        return (any(getattr(self, k) != v for k, v in GENERIC_FIELDS.items() if k != "materials")
                or (self.materials != () and self.record_module is None))

    def hashed_dict(self) -> dict[str, Any]:
        """The flat record without the general model's fields that hold their defaults (hash stability:
        the bytes every session recorded before `Trial` became generic)."""
        d = self.flat_dict()
        for k, v in GENERIC_FIELDS.items():
            if d[k] == v:
                del d[k]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], factor_names: tuple[str, ...] | list[str] = ()) -> "Trial":
        """From a flat record (`hashed_dict`, a sidecar's sequence JSON) or a trial-table row (strings;
        `factor_names`: the design's factors, whose levels a row holds in their own columns). A general
        design's record columns are not read: they follow from its other fields (its factors among them)."""
        keys = record_keys()
        names = {*BASE_FIELDS, "feedback", *keys, *GENERIC_FIELDS}
        kw = {k: v for k, v in d.items() if k in names}
        for r in records():
            if any(k in kw for k in r.KEYS):
                r.read_columns(kw, d)
        if "list_number" not in kw and d.get("list") not in (None, ""):  # a trial-table row
            kw["list_number"] = int(d["list"])
        if factor_names and "factors" not in kw:  # a trial-table row: one column per factor, all or none
            given = all(d.get(n) not in (None, "") for n in factor_names)  # (a factor-less filler: none)
            kw["factors"] = tuple((n, _level(d[n])) for n in factor_names) if given else ()
        if isinstance(kw.get("materials"), str):  # a trial-table row: JSON
            kw["materials"] = tuple(sorted(json.loads(kw["materials"]).items())) if kw["materials"] else ()
        for k in ("factors", "materials"):
            if k in kw:
                kw[k] = freeze_pairs(kw[k])
        record = {k: kw.pop(k) for k in keys if k in kw}
        if any(kw.get(k, v) != v for k, v in GENERIC_FIELDS.items()) or not record:
            return cls(**kw)  # a general design's trial
        return cls.of_record(**kw, **record)


def _level(value: Any) -> str:
    """A factor level as a row holds it -> its name (to_row writes a `grammatical` level as a boolean)."""
    if isinstance(value, bool) or str(value) in ("True", "False"):
        return str(value).lower()
    return str(value)


# feedback: see flat_dict
BASE_FIELDS: tuple[str, ...] = ("experiment", "block", "trial_index", "block_trial_index", "item_id")
GENERIC_FIELDS: dict[str, Any] = {"item": "", "list_number": None, "factors": (), "task": "", "role": "",
                                  "materials": ()}
# a general design's row (`Trial.to_row`) besides its factors' columns
GENERAL_ROW: tuple[str, ...] = (*BASE_FIELDS, "condition", "words", "correct_response", "feedback", "grammatical",
                                "item", "list", "task", "role", "materials")


def freeze(value: Any) -> Any:
    """JSON value -> hashable, comparable form (lists become tuples, dicts sorted pairs)."""
    if isinstance(value, Mapping):
        return tuple((str(k), freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def freeze_pairs(value: Any) -> tuple[tuple[str, Any], ...]:
    """A mapping or a list of [key, value] pairs -> tuple of (key, frozen value) pairs, order kept."""
    if isinstance(value, Mapping):
        items = list(value.items())
    else:
        items = [tuple(p) for p in value]
    return tuple((str(k), freeze(v)) for k, v in items)


def thaw(pairs: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Frozen materials -> a plain JSON-able dict (tuples become lists)."""
    def t(v: Any) -> Any:
        return [t(x) for x in v] if isinstance(v, tuple) else v
    return {k: t(v) for k, v in pairs}


@dataclass(frozen=True)
class TrialSequence:
    """All trials of one subject, in order. Deterministic and hashed (the hash goes in every session)."""

    experiment: str
    subject_id: str
    seed: int
    spec_hash: str
    trials: tuple[Trial, ...]
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    session: int = 1  # which of the subject's sessions (multi-session specs)

    def __len__(self) -> int:
        return len(self.trials)

    def __iter__(self) -> Iterator[Trial]:
        return iter(self.trials)

    def __getitem__(self, i: int) -> Trial:
        return self.trials[i]

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no whitespace variance): the bytes that are hashed."""
        body = {
            "experiment": self.experiment,
            "subject_id": self.subject_id,
            "seed": self.seed,
            "spec_hash": self.spec_hash,
            "trials": [t.hashed_dict() for t in self.trials],
        }
        if self.session != 1:  # (session 1 hashes as before sessions existed)
            body["session"] = self.session
        if self.meta.get("design"):  # a general design: its factors, list and mode (Lakretz: absent)
            body["design"] = self.meta["design"]
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @cached_property
    def sequence_hash(self) -> str:
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()[:16]

    @classmethod
    def from_json(cls, text: str) -> "TrialSequence":
        d = json.loads(text)
        return cls(
            experiment=d["experiment"], subject_id=d["subject_id"], seed=d["seed"],
            spec_hash=d["spec_hash"], trials=tuple(Trial.from_dict(t) for t in d["trials"]),
            session=int(d.get("session", 1)), meta={"design": d["design"]} if d.get("design") else {},
        )

    @property
    def design(self) -> dict[str, Any] | None:
        """The design record (factors, list, lists, mode) of a general design; None for a Lakretz one."""
        return self.meta.get("design")

    @property
    def is_generic(self) -> bool:
        return bool(self.design) or any(t.is_generic for t in self.trials)

    def table_columns(self, earlier: bool = False) -> list[str]:
        """The trial table's header for this sequence (docs/general_model/trial-table.md "Trial table"): a study's own
        sequence keeps its study's columns byte for byte; a general design has the core's columns, its kinds'
        and one column per declared factor (a factor named like a core column fills that column). `earlier`:
        the header a general design's session was written with under a study's earlier general layout."""

        if not self.is_generic:
            return table_columns(())
        names = list((self.design or {}).get("factors") or {})
        for t in self.trials:
            names += [n for n, _ in t.factors if n not in names]
        return table_columns(names, generic=True, kinds={t.task for t in self.trials}, earlier=earlier)

    def blocks(self) -> list[str]:
        seen: list[str] = []
        for t in self.trials:
            if t.block not in seen:
                seen.append(t.block)
        return seen
