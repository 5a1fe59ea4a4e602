"""Invented data in exactly the Lakretz et al. (2021) release format: logs and results table.

For the importer's fixtures (scripts/make_lakretz_fixtures.py writes tests/fixtures/lakretz2021/),
its tests and its benchmark. The format is copied from the public files (lakretz_format): same
header and columns, tabs and CRLF, trailing tab, event sequence, num2str precision, the same
vocabulary of sentence types, conditions, violation types, outcome codes and table columns. The
words are invented (a small Italian-like lexicon written here), the trials and answers are drawn
from a seeded generator, and every trial is returned as `SynthTrial`, the ground truth tests
compare the importer against.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from studies.lakretz2021.importers.format import (
    LOG_HEADER,
    LOG_TYPE_OF_TABLE,
    TABLE_COLUMNS,
    VALID_ANSWER_OF_OUTCOME,
    dependency_of,
    num2str,
)

# invented lexicon: (singular, plural) with article, and with the preposition "a" + article
NOUNS = [("il cuoco", "i cuochi", "al cuoco", "ai cuochi"), ("la sarta", "le sarte", "alla sarta", "alle sarte"),
         ("il pittore", "i pittori", "al pittore", "ai pittori"),
         ("la maestra", "le maestre", "alla maestra", "alle maestre"),
         ("l' autista", "gli autisti", "all' autista", "agli autisti"), ("il nonno", "i nonni", "al nonno", "ai nonni"),
         ("la vicina", "le vicine", "alla vicina", "alle vicine"), ("lo zio", "gli zii", "allo zio", "agli zii"),
         ("il pilota", "i piloti", "al pilota", "ai piloti"), ("la cugina", "le cugine", "alla cugina", "alle cugine")]
THINGS = [("il tavolo", "i tavoli"), ("la lampada", "le lampade"), ("il cappello", "i cappelli"),
          ("la bussola", "le bussole")]
VERBS = [("aiuta", "aiutano", "aiutare"), ("chiama", "chiamano", "chiamare"), ("saluta", "salutano", "salutare"),
         ("segue", "seguono", "seguire"), ("cerca", "cercano", "cercare"), ("ascolta", "ascoltano", "ascoltare")]
MENTAL = [("pensa", "pensano"), ("afferma", "affermano"), ("racconta", "raccontano")]
PREPS = ["vicino", "accanto", "dietro", "davanti"]

# the design of one subject's 540 main trials (two sessions): per type, per condition
DESIGN = {"objrel_nounpp": {"Acceptable": 10, "V1": 5, "V2": 5, "Filler": 10},
          "objrel": {"Acceptable": 10, "V1": 5, "V2": 5, "Filler": 10},
          "embedding_mental_LR": {"Acceptable": 5, "V2": 5, "Filler": 5},
          "embedding_mental_SR": {"Acceptable": 5, "V2": 5, "Filler": 5}}
CONDS = {2: ("SS", "SP", "PS", "PP"), 3: ("SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP")}
N_CONDITION_LETTERS = {"objrel": 2, "embedding_mental_SR": 2, "objrel_nounpp": 3, "embedding_mental_LR": 3}
# (1-based) slide of each verb as the release codes it in Viol_on_slide (objrel_nounpp: one more)
SLIDE_OF = {("objrel", "V1"): 4, ("objrel", "V2"): 5, ("objrel_nounpp", "V1"): 7, ("objrel_nounpp", "V2"): 8,
            ("embedding_mental_LR", "V2"): 7, ("embedding_mental_SR", "V2"): 5}
FILLER_KINDS = {"objrel": [("V1", -4), ("V2", -5), ("N1", -1)],
                "objrel_nounpp": [("V1", -7), ("V2", -8), ("N1", -1), ("N2", -3)],
                "embedding_mental_LR": [("V2", -7), ("N2", -4)], "embedding_mental_SR": [("V2", -5), ("N1", -1)]}


@dataclass
class SynthTrial:
    """One generated trial: what the log and the table say about it (the tests' ground truth)."""

    subject: int
    session: int
    training: bool
    trial: int  # 1-based, as the log's Trial column
    stype: str  # table name
    condition: str
    trial_type: str
    vtype: str  # None, V1, V2, N1, N2, FA, FI
    vslide: int
    units: list[str]
    panel: str  # VIOLATION, ACCEPTABLE or '' (timeout)
    panel_rt: float
    key_slide: int | None  # 1-based slide at the first early key press
    key_phase: str | None  # sentence or fixation
    outcome: str = ""
    release_rt: float = 0.0
    finished: bool = True
    onsets: list[float] = field(default_factory=list)  # s, PsychoPy clock
    fix_time: float = 0.0
    key_time: float | None = None


def outcome_code(trial_type: str, panel: str, key: bool) -> str:
    """The release's END_TRIAL code from the trial type, the panel answer and an early key press."""
    truth = "ACCEPTABLE" if trial_type == "Acceptable" else "VIOLATION"
    if panel == "":
        return "CORRECT_DDC" if truth == "ACCEPTABLE" else "WRONG_DDC"
    ok = "CORRECT" if panel == truth else "WRONG"
    consistent = key == (panel == "VIOLATION")
    return ok if consistent else ok + "_INC"


def _sentence(rng: np.random.Generator, stype: str, cond: str, vtype: str, trial_type: str) -> list[str]:
    idx = rng.choice(len(NOUNS), size=3, replace=False)
    num = [0 if c == "S" else 1 for c in cond] + [0, 0]
    n1, n2, n3 = (NOUNS[i] for i in idx)
    obj = NOUNS[int(rng.integers(len(NOUNS)))][int(rng.integers(2))]
    v_in, v_out = (VERBS[i] for i in rng.choice(len(VERBS), size=2, replace=False))
    if stype in ("objrel", "objrel_nounpp"):
        inner, outer = v_in[num[1]], v_out[num[0]]
    else:
        outer, inner = MENTAL[int(rng.integers(len(MENTAL)))][num[0]], v_in[num[1]]
    if trial_type == "Violation":  # flip the number of the violated verb
        if ((stype in ("objrel", "objrel_nounpp") and vtype == "V1")
                or (stype.startswith("embedding") and vtype == "V2")):
            inner = v_in[1 - num[1]]
        else:
            outer = v_out[1 - num[0]]
    elif trial_type == "Filler" and vtype in ("V1", "V2"):  # a non-verb at the verb's place
        odd = v_in[2] if rng.random() < 0.5 else NOUNS[int(rng.integers(len(NOUNS)))][0].split(" ", 1)[1]
        is_inner = (vtype == "V1") == (stype in ("objrel", "objrel_nounpp"))
        inner, outer = (odd, outer) if is_inner else (inner, odd)
    subj1, subj2 = n1[num[0]], n2[num[1]]
    if trial_type == "Filler" and vtype == "N1":
        subj1 = THINGS[int(rng.integers(len(THINGS)))][num[0]]
    if trial_type == "Filler" and vtype == "N2":
        subj2 = THINGS[int(rng.integers(len(THINGS)))][num[1]]
    pp = [PREPS[int(rng.integers(len(PREPS)))], n3[2 + num[2]]]
    if stype == "objrel":
        return [subj1, "che", subj2, inner, outer, obj]
    if stype == "objrel_nounpp":
        return [subj1, "che", subj2] + pp + [inner, outer, obj]
    if stype == "embedding_mental_LR":
        return [subj1, outer, "che", subj2] + pp + [inner, obj]
    return [subj1, outer, "che", subj2, inner, obj]


def design_cells(rng: np.random.Generator, scale: float = 1.0) -> list[tuple[str, str, str, str, int]]:
    """(stype, condition, trial_type, vtype, vslide) of one subject's main trials, shuffled."""
    cells = []
    for stype, counts in DESIGN.items():
        for cond in CONDS[N_CONDITION_LETTERS[stype]]:
            for kind, n in counts.items():
                for _ in range(max(1, round(n * scale)) if scale < 1 else n):
                    if kind == "Acceptable":
                        vt = str(rng.choice(["None"] * 8 + ["FA", "FI"]))
                        cells.append((stype, cond, "Acceptable", vt, 0))
                    elif kind == "Filler":
                        vt, sl = FILLER_KINDS[stype][int(rng.integers(len(FILLER_KINDS[stype])))]
                        cells.append((stype, cond, "Filler", vt, sl))
                    else:
                        cells.append((stype, cond, "Violation", kind, SLIDE_OF[(stype, kind)]))
    order = rng.permutation(len(cells))
    return [cells[i] for i in order]


def simulate_session(rng: np.random.Generator, subject: int, session: int, cells, training: bool = False,
                     p_error: float = 0.2, p_key: float = 0.15, p_timeout: float = 0.02) -> list[SynthTrial]:
    trials = []
    for k, (stype, cond, ttype, vtype, vslide) in enumerate(cells, start=1):
        units = _sentence(rng, stype, cond, vtype, ttype)
        truth = "ACCEPTABLE" if ttype == "Acceptable" else "VIOLATION"
        r = rng.random()
        panel = "" if r < p_timeout else (truth if r > p_timeout + p_error else
                                          ("VIOLATION" if truth == "ACCEPTABLE" else "ACCEPTABLE"))
        key = rng.random() < (p_key * (3 if truth == "VIOLATION" else 1))
        key_slide = int(rng.integers(abs(vslide) if vslide else 2, len(units) + 1)) if key else None
        key_phase = (("panel_delay" if rng.random() < 0.7 else "sentence") if key else None)
        if key and key_phase == "panel_delay":
            key_slide = len(units)
        trials.append(SynthTrial(subject=subject, session=session, training=training, trial=k, stype=stype,
                                 condition=cond, trial_type=ttype, vtype=vtype, vslide=vslide, units=units,
                                 panel=panel, panel_rt=0.0 if panel == "" else float(rng.uniform(0.2, 1.4)),
                                 key_slide=key_slide, key_phase=key_phase,
                                 outcome=outcome_code(ttype, panel, key)))
    return trials


def _line(*fields) -> str:
    return "\t".join(str(f) for f in fields) + "\t\r\n"


def render_log(trials: list[SynthTrial], start_clock: float, training: bool, cut_inside_last: bool = False) -> str:
    """The log text of one session; fills in each trial's times, release RT and onsets."""
    block = 0 if training else 1
    out = ["\t".join(LOG_HEADER) + "\r\n"]
    t = start_clock
    if not training:
        out.append(_line("GrandStart", 0, 0, 0, 0, " ", num2str(round(t, 4))))
        t += 300.0 + (start_clock % 7)
    out.append(_line("BlockStart", block, 0, 0, 0, " ", num2str(round(t, 4))))
    t += 0.011
    for i, tr in enumerate(trials):
        last = cut_inside_last and i == len(trials) - 1
        st = LOG_TYPE_OF_TABLE[tr.stype]
        vt = "NaN" if tr.vtype == "None" else tr.vtype
        cell = (st, tr.condition, tr.vslide)
        tr.fix_time = round(t, 4)
        out.append(_line("FIX_ON", block, tr.trial, 0, "-", "+", num2str(tr.fix_time), *cell))
        t += 0.6097
        key_line = None
        tr.onsets = []
        for s, unit in enumerate(tr.units, start=1):
            on = round(t, 4)
            tr.onsets.append(on)
            out.append(_line("WORD_ON", block, tr.trial, 0, s, unit, num2str(on), *cell, vt))
            if tr.key_phase == "sentence" and tr.key_slide == s:
                tr.key_time = round(on + 0.0015, 4)
                key_line = _line("KEY_PRESS", block, tr.trial, 0, s, "VIOLATION", num2str(tr.key_time), *cell)
                out.append(key_line)
            t += 0.2462
            out.append(_line("WORD_OFF", block, tr.trial, 0, s, " ", num2str(round(t, 4)), *cell))
            t += 0.2462
            if last and s == 5:
                tr.finished = False
                return "".join(out)
        out.append(_line("FIX2PANEL_ON", block, tr.trial, "-", "-", "+", num2str(round(t, 4)), *cell, vt))
        if tr.key_phase == "panel_delay":
            tr.key_time = round(t + 0.35, 4)
            out.append(_line("KEY_PRESS", block, tr.trial, 0, len(tr.units), "VIOLATION", num2str(tr.key_time), *cell))
        t += 1.5124
        panel_on = round(t, 4)
        out.append(_line("PanelOn", block, tr.trial, "-", "-", " ", num2str(panel_on), *cell, vt))
        rt = float(num2str(tr.panel_rt)) if tr.panel else 0.0
        tr.panel_rt = rt
        out.append(_line("PanelResp", block, tr.trial, "-", "-", tr.panel, num2str(rt), *cell, vt))
        t = panel_on + (rt if tr.panel else 1.5) + 0.0031
        out.append(_line("FeedbackOn", block, tr.trial, "-", "-", " ", num2str(round(t, 4)), *cell))
        t += 1.0318
        out.append(_line("FeedbackOff", block, tr.trial, "-", "-", " ", num2str(round(t, 4)), *cell))
        if tr.key_time is not None and tr.trial_type != "Acceptable":
            tr.release_rt = float(num2str(round(tr.key_time - tr.onsets[abs(tr.vslide) - 1], 5)))
        out.append(_line("END_TRIAL", block, tr.trial, "-", "-", tr.outcome, num2str(tr.release_rt), *cell, vt))
        t += 0.0118
    return "".join(out)


def _bool(x: bool) -> str:
    return "True" if x else "False"


def table_lines(trials: list[SynthTrial], outliers: set[int], rng: np.random.Generator) -> list[str]:
    """Results-table lines (no header) for the finished main trials, in the release's sorted-by-cell order."""
    rows = []
    for tr in trials:
        if tr.training or not tr.finished:
            continue
        cs = tr.condition[0] == tr.condition[1]
        ca = "" if len(tr.condition) == 2 else _bool(tr.condition[1] == tr.condition[2])
        dep = dependency_of(tr.stype, tr.vtype)
        rows.append((tr.subject, tr.stype, tr.trial_type, tr.vtype, rng.random(), ",".join([
            str(tr.subject), tr.stype, tr.trial_type, tr.vtype, dep, _bool(cs), ca, f"{_bool(cs)}_{ca}" if ca else "",
            tr.condition, tr.outcome, VALID_ANSWER_OF_OUTCOME[tr.outcome], "1", str(tr.trial), str(tr.vslide),
            num2str(tr.release_rt), _bool(tr.subject in outliers)])))
    rows.sort(key=lambda r: r[:5])
    return [r[5] + "\n" for r in rows]


@dataclass
class SynthRelease:
    """What `write_release` wrote: the trials (ground truth) and the files."""

    trials: list[SynthTrial]
    table: Path | None
    logs: Path
    log_files: list[Path]


@dataclass
class SubjectPlan:
    subject: int
    sessions: tuple[int, ...] = (1, 2)
    in_table: bool = True
    outlier: bool = False
    extra_trials: dict[int, int] = field(default_factory=dict)  # session -> trials added (e.g. 271)
    cut_session: int | None = None  # this session's log ends inside its last trial
    cut_after: int | None = None  # ... after this many finished trials
    training_only: bool = False
    twin: int | None = None  # session 2's trial k repeats session 1's trial k exactly (same cell, same answer)


def write_release(folder: str | Path, plans: list[SubjectPlan], seed: int = 2021, scale: float = 1.0,
                  training_trials: int = 40, per_session: int | None = None) -> SynthRelease:
    """Write `logs/` and `dataframe_results_all_trials.csv` under `folder` for the planned subjects.

    `scale` shrinks the 540-trial design and `per_session` caps each session (fixtures); a
    training-only subject gets a `train_` log.
    """
    folder = Path(folder)
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    all_trials: list[SynthTrial] = []
    files = []
    day = datetime(2019, 10, 7, 9, 30, 0)
    outliers = {p.subject for p in plans if p.outlier}
    for k, plan in enumerate(plans):
        when = day + timedelta(days=k, seconds=int(rng.integers(0, 4 * 3600)))
        if plan.training_only:
            cells = design_cells(rng, scale)[:training_trials]
            trials = simulate_session(rng, plan.subject, 1, cells, training=True)
            text = render_log(trials, float(round(rng.uniform(800, 9000), 4)), training=True)
            name = f"train_logLocalGlobalParadigm_{when:%Y%b%d_%H%M%S}_Subj_{plan.subject:02d}_sess_1.csv"
            (logs / name).write_bytes(text.encode("ascii"))
            files.append(logs / name)
            all_trials += trials
            continue
        cells = design_cells(rng, scale)
        half = len(cells) // 2
        parts = {1: cells[:half][:per_session], 2: cells[half:][:per_session]}
        if plan.twin is not None:
            parts[2][plan.twin - 1] = parts[1][plan.twin - 1]
        done: dict[int, tuple[list[SynthTrial], bool]] = {}
        for s in plan.sessions:
            sc = list(parts[s])
            for _ in range(plan.extra_trials.get(s, 0)):
                sc.append(sc[int(rng.integers(len(sc)))])
            cut = plan.cut_session == s
            if cut:
                sc = sc[: (plan.cut_after or len(sc) // 2) + 1]
            done[s] = (simulate_session(rng, plan.subject, s, sc), cut)
        if plan.twin is not None and 1 in done and 2 in done:
            a, b = done[1][0][plan.twin - 1], done[2][0][plan.twin - 1]
            for tr in (a, b):
                tr.key_slide, tr.key_phase = None, None
            b.panel, b.panel_rt = a.panel, a.panel_rt
            a.outcome = b.outcome = outcome_code(a.trial_type, a.panel, False)
        for s, (trials, cut) in done.items():
            t_start = when + timedelta(days=7 * (s - 1))
            text = render_log(trials, float(round(rng.uniform(1000, 15000), 4)), training=False, cut_inside_last=cut)
            name = f"logLocalGlobalParadigm_{t_start:%Y%b%d_%H%M%S}_Subj_{plan.subject:02d}_sess_{s}.csv"
            (logs / name).write_bytes(text.encode("ascii"))
            files.append(logs / name)
            all_trials += trials
    in_table = {p.subject for p in plans if p.in_table and not p.training_only}
    table_path = folder / "dataframe_results_all_trials.csv"
    lines = table_lines([t for t in all_trials if t.subject in in_table], outliers, rng)
    table_path.write_bytes((",".join(TABLE_COLUMNS) + "\n" + "".join(lines)).encode("ascii"))
    return SynthRelease(trials=all_trials, table=table_path, logs=logs, log_files=files)


FIXTURE_SEED = 7
FIXTURE_PER_SESSION = 24
FIXTURE_TRAINING_TRIALS = 12


def write_fixtures(folder: str | Path) -> SynthRelease:
    """The committed fixture set (tests/fixtures/lakretz2021/), reproducible byte for byte."""
    return write_release(folder, fixture_plans(), seed=FIXTURE_SEED, per_session=FIXTURE_PER_SESSION,
                         training_trials=FIXTURE_TRAINING_TRIALS)


def fixture_plans() -> list[SubjectPlan]:
    """The committed fixture set: each edge case of the real release once, small sessions."""
    return [
        SubjectPlan(101, outlier=True),
        SubjectPlan(102, extra_trials={2: 1}, twin=3),  # a 1-trial-longer session 2 (like subject 66); twin rows
        SubjectPlan(103, cut_session=2, cut_after=10),  # the log stops inside a trial (like subject 43)
        SubjectPlan(104, sessions=(2,), in_table=False),  # logs but no table rows (like subject 57)
        SubjectPlan(7, training_only=True),  # a pilot's training log (like subject 06)
    ]


def release_plans(n_subjects: int = 55, n_log_only: int = 6, n_training: int = 4) -> list[SubjectPlan]:
    """A release-sized set: 55 table subjects x 2 sessions, a few log-only subjects, pilot training logs."""
    plans = [SubjectPlan(20 + i, outlier=(i == 3)) for i in range(n_subjects)]
    plans += [SubjectPlan(200 + i, sessions=(1 + i % 2,), in_table=False) for i in range(n_log_only)]
    plans += [SubjectPlan(6 + i, training_only=True) for i in range(n_training)]
    return plans
