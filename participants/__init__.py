"""twinlab human participants: the PsychoPy runner (`twinlab run-human`).

Modules, one job each: `cli` (the command), `runner` (a session from checks to closing),
`display` (window, keyboard, refresh measurement), `timing` (the frames-or-clock policy),
`rsvp` (a trial and text pages on screen), `screens` (stimuli, screenshots), `keys` (keyboard and
key injection), `autopilot` (simulated answers for demos and tests), `rows` (trial rows and the
PsychoPy-style CSV), `dialog` (participant info). Nothing here imports PsychoPy at module level
except through functions that run a session.
"""

# this package's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "run-human", "module": "cli", "function": "run_human",
     "help": "Run a human session in PsychoPy: instructions, training with feedback, test block(s); crash-safe."},
    {"group": "", "name": "import", "module": "imports.cli", "function": "import_app",
     "help": "Import people's results into twinlab sessions: files from PsychoPy, jsPsych, PCIbex/Ibex or a plain "
             "table, twinlab's own browser sessions, and released datasets."},
)
