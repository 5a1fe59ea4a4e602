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

# the released formats `twinlab import` lists (analysis/importers), each a command of a module of this study
IMPORTERS = (
    {"name": "lakretz2021",
     "description": "Lakretz et al. (2021) public release: results table and raw session logs -> twinlab sessions",
     "module": "importers.cli", "command": "import_lakretz2021"},
)

# the trial record this study's trials carry, as the module of this study that holds it: experiments/trials.py
# builds, reads and writes every trial's flat (hashed) record through it (studies/lakretz2021/materials.py)
TRIAL_RECORD = "materials"

# what a spec whose trials come from this study's cells (its `stimuli:` section: the nested-agreement generator
# or a stimulus file of Lakretz items) runs when its `task:` names no kind (experiments/spec_model.py)
SPEC_DEFAULTS = {"source": "stimuli", "task_kind": "violation_detection"}

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
