"""Sessions of different versions of one spec are never pooled silently.

Why: the factors' level order sets the sum coding (the sign of every effect), and a spec edited between
sessions (another spec_hash) may mean other items, labels or timing. The loader records each session's
version (sidecar spec_hash, factor levels, start time, the rows' spec_hash); `check_versions` compares
them once every file is read: a difference is a SpecVersionError naming the versions and the files,
unless `allow` (`--allow-spec-versions`), when every session is coded by the current version (the newest
session's) and the notes name every version. The coding never depends on which sidecar was read first,
and "newest" is read from the start times as times: a session whose time is missing or not a time, or
two versions started at the same newest time, make the newest unknowable, and pooling is then refused
naming them (as text, "unknown" sorted newest and its level order flipped every sign).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from analysis.load.base import LoadError, LoadInfo


class SpecVersionError(LoadError):
    """Sessions of different spec versions (spec_hash or factor level order) given together."""


@dataclass
class SessionVersion:
    file: str
    experiment: str
    spec_hash: str | None
    factors: dict[str, list[str]] | None
    started_at: str
    other_rows: list[tuple[int, str]] = field(default_factory=list)  # (line, spec_hash) differing from the sidecar
    n_other: int = 0  # how many rows carry another spec_hash than the sidecar


def session_version(path, meta: dict, df: pd.DataFrame, factors: dict[str, list[str]] | None) -> SessionVersion:
    """One session's version as its sidecar and rows give it (rows whose spec_hash is not the sidecar's named)."""
    exp = str(meta.get("experiment") or (df["experiment"].dropna().iloc[0] if "experiment" in df and
                                        df["experiment"].notna().any() else ""))
    side = meta.get("spec_hash")
    side = str(side) if side not in (None, "") else None
    other: list[tuple[int, str]] = []
    n_other = 0
    if "spec_hash" in df.columns:
        rows = df["spec_hash"].astype("string")
        base = side if side is not None else (rows.dropna().iloc[0] if rows.notna().any() else None)
        if base is not None:
            bad = (rows.notna() & (rows != base)).fillna(False)
            other = [(int(i) + 2, str(rows[i])) for i in rows[bad].index[:3]]
            n_other = int(bad.sum())
        side = base
    return SessionVersion(path.name, exp, side, factors if factors else None, str(meta.get("started_at") or ""),
                          other, n_other)


def _short(h: str | None) -> str:
    return (h or "none")[:12]


def _differences(versions: list[SessionVersion]) -> list[str]:
    """Every difference, the level orders first (they set the coding), then spec hashes, then rows."""
    levels, hashes, rows = [], [], []
    seen: dict[str, tuple[list[str], str]] = {}
    for v in versions:
        for name, lv in (v.factors or {}).items():
            if lv and name in seen and seen[name][0] != lv:
                levels.append(f"factor {name!r} has levels [{', '.join(seen[name][0])}] in {seen[name][1]} but "
                              f"[{', '.join(lv)}] in {v.file} (the level order sets the sum coding, the sign of "
                              "every effect)")
            if lv:
                seen.setdefault(name, (lv, v.file))
    by_exp: dict[str, dict[str, list[str]]] = {}
    for v in versions:
        if v.spec_hash:
            by_exp.setdefault(v.experiment, {}).setdefault(v.spec_hash, []).append(v.file)
    for exp, hs in by_exp.items():
        if len(hs) > 1:
            hashes.append(f"experiment {exp!r} was run with {len(hs)} versions of its spec: " + "; ".join(
                f"spec_hash {_short(h)} ({len(fs)} session(s): {', '.join(fs[:3])}{', ...' if len(fs) > 3 else ''})"
                for h, fs in hs.items()))
    for v in versions:
        if v.n_other:
            lines = ", ".join(str(ln) for ln, _ in v.other_rows) + (", ..." if v.n_other > len(v.other_rows) else "")
            rows.append(f"{v.file}: {v.n_other} row(s) carry another spec_hash than the sidecar's "
                        f"{_short(v.spec_hash)} "
                        f"(line {lines}: {_short(v.other_rows[0][1])})")
    return levels + hashes + rows


def start_time(text: str):
    """A sidecar's `started_at` as a time (ISO 8601, as twinlab writes it), or None when it is missing or not
    a time ('unknown', '', '2026-13-40'). Compared as times, never as text: as text 'unknown' sorts after
    every date and '2026-11-20T09:00+01:00' before '2026-11-20T08:30+00:00'."""
    try:
        return datetime.fromisoformat(str(text).strip())
    except ValueError:
        return None


def _key(v: SessionVersion) -> tuple:
    return v.spec_hash, tuple((k, tuple(lv)) for k, lv in (v.factors or {}).items())


def newest(versions: list[SessionVersion]) -> tuple[SessionVersion | None, str]:
    """The current version: the newest session's (latest started_at as a time), or (None, why it cannot be
    told): a start time missing or not a time, times with and without a time zone mixed (they cannot be
    ordered), or two sessions of different versions started at the newest time."""
    times = [(v, start_time(v.started_at)) for v in versions]
    bad = [v for v, t in times if t is None]
    if bad:
        return None, (f"the start time of {len(bad)} session(s) is not a time (" + "; ".join(
            f"{v.file}: started_at {v.started_at!r}" for v in bad[:3]) + (", ..." if len(bad) > 3 else "") + ")")
    aware = [t.utcoffset() is not None for _, t in times]
    if any(aware) and not all(aware):
        naive = [v.file for (v, _), a in zip(times, aware, strict=False) if not a]
        return None, (f"the start time of {', '.join(naive[:3])}{', ...' if len(naive) > 3 else ''} has no time zone "
                      "and others have one, so they cannot be ordered")
    last = max(t for _, t in times)
    top = [v for v, t in times if t == last]
    if len({_key(v) for v in top}) > 1:
        return None, (f"sessions of different versions started at the same newest time {top[0].started_at} "
                      f"({', '.join(v.file for v in top[:3])})")
    return top[-1], ""


def check_versions(versions: list[SessionVersion], info: LoadInfo, allow: bool) -> None:
    """Refuse sessions of different spec versions (SpecVersionError), or with `allow` set the factors to the
    current version's levels (others' extra levels after them) and name every version in the notes."""
    diffs = _differences(versions)
    if not diffs:
        return
    cur, why = newest([v for v in versions if v.spec_hash or v.factors] or versions)
    if not allow:
        which = (f"the current version (spec_hash {_short(cur.spec_hash)}, the newest session: {cur.file})" if cur
                 else f"the newest session's version (which cannot be told: {why})")
        raise SpecVersionError("sessions of different spec versions given together: " + "; ".join(diffs[:6])
                               + f"{'; ...' if len(diffs) > 6 else ''}. Pooling them silently would code every "
                               "session by whichever was read first: analyse one version, or pass "
                               f"--allow-spec-versions (API: allow_spec_versions=True) to code them all by {which}")
    if cur is None:
        raise SpecVersionError("--allow-spec-versions codes every session by the newest session's version, but which "
                               f"session is newest cannot be told: {why}. Give each sidecar its started_at (an ISO "
                               "time), or analyse one version at a time; differences: " + "; ".join(diffs[:6]))
    factors: dict[str, list[str]] = {k: list(v) for k, v in (cur.factors or {}).items()}
    for name, levels in info.factors.items():
        have = factors.setdefault(name, [])
        have += [lv for lv in levels if lv not in have]
    info.factors = factors
    text = ("Sessions of different spec versions pooled (--allow-spec-versions), coded by the current version "
            f"(spec_hash {_short(cur.spec_hash)}, the newest session: {cur.file}): " + "; ".join(diffs))
    info.spec_versions = text
    info.notes.append(text)
