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
