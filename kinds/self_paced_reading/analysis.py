"""Self-paced reading on the analysis side: read word by word, its sections after the shared measures'.

The numbers are the core's reading measures (analysis/measures/reading.py: word and region rows, the named rules,
means with CIs, the by-region and surprisal-reading-time formulas), which every trial with per-word reading times
or surprisals goes through; the sections that show them are analysis/report/reading.py (reading times and
surprisal by region, log-RT mixed models by region with length and spillover, and people's reading times on the
models' surprisal).
"""
from __future__ import annotations

from analysis.kind_sections import AnalysisKind, SectionArgs
from analysis.report.reading import reading_sections


def _reading_sections(a: SectionArgs) -> None:
    # the reading report (word and region times beside surprisal) on all rows
    reading_sections(a.res, a.rows, a.factors, a.opt, a.out, a.log, a.skipped)


# the kind on the analysis side: read word by word (the twins' reading ΔLL and the adaptation effect read its
# trials' words); its sections come after the shared measures', on all rows (analysis/report/reading.py)
ANALYSIS = AnalysisKind("self_paced_reading", word_by_word=True, closing_section=_reading_sections)
