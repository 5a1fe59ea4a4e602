"""Lakretz, Hupkes, Vergallito, Marelli, Baroni & Dehaene (2021): nested number agreement, violation
detection in Italian, and seeds/000's re-analysis of it (README.md says what each module holds).

Light on purpose (no imports): experiments/studies.py reads these declarations without importing the
study's modules.
"""
ORDER = 0
TITLE = "Lakretz et al. (2021): nested agreement, violation detection (seeds/000 Appendix C)"

# the plain-data module of the trial-table columns this study adds and the header layout every session keeps
# (experiments/schema.py)
TABLE = "columns"

# the released formats `twinlab import` lists (participants/imports/registry.py), each a command of a module of
# this study
IMPORTERS = (
    {"name": "lakretz2021",
     "description": "Lakretz et al. (2021) public release: results table and raw session logs -> twinlab sessions",
     "module": "importers.cli", "command": "import_lakretz2021",
     # the release table's own columns: `sniff` names a file given to another import command as this release's
     "signs": ("subject", "sentence_type", "valid_answer")},
)

# the trial record this study's trials carry, as the module of this study that holds it: experiments/trials.py
# builds, reads and writes every trial's flat (hashed) record through it (studies/lakretz2021/materials.py)
TRIAL_RECORD = "materials"

# what a spec whose trials come from this study's cells (its `stimuli:` section: the nested-agreement generator
# or a stimulus file of Lakretz items) runs when its `task:` names no kind (experiments/spec_model.py)
SPEC_DEFAULTS = {"source": "stimuli", "task_kind": "violation_detection", "break_after": True}

# the block fields this study's cells read besides `structures`/`design` (declared on experiments/spec_model.py's
# Block): a block of a `design:` spec (with `role`) that gives one is refused naming it
BLOCK_FIELDS = ("lexicon", "conditions", "versions", "repetitions", "grammatical_weight",
                "max_consecutive_violations", "max_consecutive_same_structure")
# the items of a spec's `stimuli:` section (experiments/sources, experiments/studies.stimuli_part): this
# study's crossed cells, from its nested-agreement generator or a stimulus file; "<module>:<attribute>"
STIMULI = {"source": "cells:LakretzCells", "structures": "stimuli.structures:STRUCTURES",
           "lexicons": "stimuli.lexicon:LEXICONS", "generate": "stimuli.generate:generate_items"}
# the study's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "stimuli", "name": "generate", "module": "stimuli.commands", "function": "generate",
     "help": "Generate an agreement stimulus set and write it as CSV/TSV (the format `stimuli.file` reads)."},
    {"group": "stimuli import", "name": "lakretz-text", "module": "stimuli.commands", "function": "import_text",
     "help": "Import Lakretz et al.'s released English nested-agreement stimuli (.text + .gold) as a stimulus file."},
)

# ---- what analysis/ collects from this study (experiments.studies.declared), as data ----
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
# the `analyze` options only this study's data read, beside its report plan (analysis/cli.py adds them to the
# command under this study's heading of `analyze --help`): `name` the parameter, `flag`, `type` (text | list |
# flag), `default`, `choices` (text), `api` the keyword of analysis.api.report they set, `help`; `focus`: the
# form of `--focus` this study's report plan reads (its learning cell, REPORT_PLANS' `cell`)
ANALYSIS_OPTIONS = (
    {"name": "training_block", "flag": "--training-block", "type": "list", "default": (), "api": "training_blocks",
     "help": "Lakretz format: a block number to treat as training (repeatable)"},
    {"name": "rejected_rule", "flag": "--rejected-rule", "type": "text", "default": "paper",
     "choices": ("paper", "strict"), "api": "rejected_rule",
     "help": "how a REJECTED trial (no answer) counts in the first-encounter and exposure analyses: paper = scored "
             "by the prefix of its release code (WRONG_DDC an error, CORRECT_DDC correct; seeds/000's Table C1), "
             "strict = left out (the subject leaves that first-encounter cell). Error rates leave REJECTED trials "
             "out under either rule"},
    {"name": "keep_outliers", "flag": "--keep-outliers", "type": "flag", "default": False, "api": "keep_outliers",
     "help": "keep subjects the data's authors flag as outliers (Lakretz is_outlier; excluded by default, as "
             "Lakretz et al. did; seeds/000 kept them)"},
)
FOCUS_FORM = ("STRUCTURE:CONDITION:inner|outer for a Lakretz design (default: the cell this study declares, the "
              "paper's slope, long_nested:PSP:inner)")
# the released results table `analyze --format` reads (auto: recognised by these columns): the module's
# reader(path, training_blocks=, keep_outliers=) -> (frame, LoadInfo)
FRAME_FORMATS = (
    {"name": "lakretz", "columns": ("subject", "sentence_type", "valid_answer"), "module": "frame",
     "reader": "import_lakretz_frame"},
)
# the module whose names analysis.simulate lends (lampinen_like_model, simulate_lakretz_rows)
SIMULATION = "simulate"
