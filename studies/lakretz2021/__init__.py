"""Lakretz, Hupkes, Vergallito, Marelli, Baroni & Dehaene (2021): nested number agreement, violation
detection in Italian, and seeds/000's re-analysis of it (README.md says what each module holds).

Light on purpose (no imports): experiments/studies.py reads these declarations without importing the
study's modules.
"""
ORDER = 0
TITLE = "Lakretz et al. (2021): nested agreement, violation detection (seeds/000 Appendix C)"

# the released formats `twinlab import` lists (analysis/importers), each a command of a module of this study
IMPORTERS = (
    {"name": "lakretz2021",
     "description": "Lakretz et al. (2021) public release: results table and raw session logs -> twinlab sessions",
     "module": "importers.cli", "command": "import_lakretz2021"},
)

# ---- what analysis/ collects from this study (issue 49 (c); experiments.studies.declared), as data ----
# display order of the cells: the structures, then the conditions in Table C1's order (congruent subjects
# first, then the incongruent; the deeper variant of seeds/000 appendix A puts its plural prefix before
# the first eight)
STRUCTURE_ORDER = ("long_nested", "short_nested", "long_successive", "short_successive")
CONDITION_ORDER = ("SSS", "SSP", "SPP", "SPS", "PPP", "PPS", "PSS", "PSP", "SS", "SP", "PP", "PS",
                   "PSSS", "PSSP", "PSPP", "PSPS", "PPPP", "PPPS", "PPSS", "PPSP")
# the report plan of this study's trial tables (analysis/report/plan.py runs it; module `plan`, object
# `plan`): its learning cell (the short --focus form STRUCTURE:CONDITION:inner|outer) and the default focus
# cell when the data are this study's design (the paper's slope, seeds/000 Table C2 / Figure 6c)
REPORT_PLANS = (
    {"name": "lakretz", "module": "plan", "plan": "LAKRETZ_CELLS",
     "cell": ("structure", "condition", "violation_position"), "positions": ("inner", "outer"),
     "default_focus": "long_nested:PSP:inner"},
)
# the released results table `analyze --format` reads (auto: recognised by these columns): the module's
# reader(path, training_blocks=, keep_outliers=) -> (frame, LoadInfo)
FRAME_FORMATS = (
    {"name": "lakretz", "columns": ("subject", "sentence_type", "valid_answer"), "module": "frame",
     "reader": "import_lakretz_frame"},
)
# the module whose names analysis.simulate lends (lampinen_like_model, simulate_lakretz_rows)
SIMULATION = "simulate"
