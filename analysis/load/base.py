"""What every trial-table reader shares: the error type, the record of what was read, the raw CSV read.

Its own module so that the readers (`analysis.load` for twinlab sessions, `studies.lakretz2021.frame` for
the Lakretz et al. 2021 results table) both import it and neither imports the other's caller:
`load` -> `lakretz` -> `load_base`, one way.
"""
from __future__ import annotations

import io
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stimuli.archives import ArchiveLimitError, csv_source


class LoadError(ValueError):
    """A data file cannot be read as a trial table; the message names file, column and line."""


@dataclass
class LoadInfo:
    """What was read: files per format, notes (filled columns, incomplete sessions) and exclusions."""

    files: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    exclusions: list[dict] = field(default_factory=list)  # {"what", "rows", "reason"}
    outliers: dict = field(default_factory=lambda: {"policy": "exclude", "kept": [], "excluded": []})
    # a general design's factors (docs/general_model.md): name -> levels in the spec's order ([] when the
    # levels are not known, e.g. a table without its sidecar, whose extra columns are taken as factors)
    factors: dict[str, list[str]] = field(default_factory=dict)
    versions: list = field(default_factory=list)  # analysis.load.spec_versions.SessionVersion, one per session read
    spec_versions: str = ""  # what was pooled under --allow-spec-versions (the report names it)

    def add_factors(self, factors: dict[str, list[str]]) -> None:
        for name, levels in factors.items():
            have = self.factors.setdefault(name, [])
            have += [lv for lv in levels if lv not in have]

    def exclude(self, what: str, rows: int, reason: str) -> None:
        """Count excluded rows; the same what and reason (e.g. one subject's two sessions) add up."""
        if not rows:
            return
        for e in self.exclusions:
            if e["what"] == what and e["reason"] == reason:
                e["rows"] += int(rows)
                return
        self.exclusions.append({"what": what, "rows": int(rows), "reason": reason})

    def why_empty(self) -> str:
        """Why no trial is left, for `no trials to analyse: ...`: the notes and exclusions, never nothing."""
        parts = list(self.notes) + [f"{e['what']}: {e['reason']} ({e['rows']} trial(s))" for e in self.exclusions]
        if self.exclusions and all(e["reason"].startswith("autopilot") for e in self.exclusions):
            parts.insert(0, "every session is an autopilot run (`run-human --autopilot`: the runner answered "
                            "itself, the responses are simulated), and analyses of human data leave those out")
        return "; ".join(parts) or "the data hold no trial rows"

    def outlier(self, subjects: list[str], keep: bool, rows: int, source: str) -> None:
        """Record subjects flagged as outliers by the data's authors, kept or excluded per `keep`."""
        self.outliers["policy"] = "keep" if keep else "exclude"
        if not subjects:
            return
        self.outliers["kept" if keep else "excluded"] += [s for s in subjects
                                                          if s not in self.outliers["kept" if keep else "excluded"]]
        if not keep:
            self.exclude(f"outlier subject(s) {', '.join(subjects)}", rows,
                         "flagged is_outlier by the data's authors (Lakretz et al. 2021 exclude them); "
                         "--keep-outliers keeps them")

    def merge(self, other: "LoadInfo") -> None:
        self.files += other.files
        self.formats.update(other.formats)
        self.notes += other.notes
        self.exclusions += other.exclusions
        self.outliers["policy"] = other.outliers["policy"]
        self.add_factors(other.factors)
        for k in ("kept", "excluded"):
            self.outliers[k] += [s for s in other.outliers[k] if s not in self.outliers[k]]


MAX_GZ_BYTES = 1_000_000_000  # one compressed table, inflated (and at most 200 times its size: stimuli/archives.py)


def read_raw_csv(path: Path | io.BytesIO, name: Path | None = None) -> pd.DataFrame:
    path_name = name or path
    try:
        path = csv_source(path, MAX_GZ_BYTES)  # a .gz inflated under the caps (pandas would not bound it)
        with warnings.catch_warnings():
            # rows longer than the header: pandas would quietly make the first column the index
            # (shifting every value one column) or drop cells; both are a broken table
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[], encoding="utf-8",
                               index_col=False)
    except pd.errors.ParserWarning:
        raise LoadError(f"{path_name}: its rows have more cells than the header has column names (a column "
                        "name missing, or a stray comma)") from None
    except pd.errors.EmptyDataError:
        raise LoadError(f"{path_name}: file is empty (no header line)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise LoadError(f"{path_name}: not a readable CSV ({str(exc).strip()})") from None
    except ArchiveLimitError as exc:
        raise LoadError(str(exc)) from None
    except (EOFError, zlib.error) as exc:  # a damaged .gz
        raise LoadError(f"{path_name}: cannot be read (damaged compressed file: {exc})") from None
    except OSError as exc:
        raise LoadError(f"{path_name}: cannot be read ({exc.strerror or exc})") from None
