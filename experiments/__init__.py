"""twinlab experiments package: the spec, the design compiler, sessions, the task kinds' registry and the CLI."""

# the ground floor's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "validate", "module": "spec_commands", "function": "validate",
     "help": "Validate a spec; print its blocks, trial counts and hash."},
    {"group": "", "name": "plan", "module": "spec_commands", "function": "plan",
     "help": "Compile the trial sequence of one subject and print or save it with its hash."},
    {"group": "", "name": "new", "module": "new_study", "function": "new",
     "help": "Start a study of your own: a folder with a spec, an items file and a README with the commands."},
    {"group": "", "name": "doctor", "module": "spec_commands", "function": "doctor",
     "help": "Report what is installed and working (Python, torch, model, PsychoPy window, R, lme4, pymer4)."},
    {"group": "stimuli", "name": "prompts", "module": "spec_commands", "function": "stimuli_prompts",
     "help": "List the bundled prompt sets (seeds/000), or print one."},
)
