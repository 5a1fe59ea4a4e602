"""The browser runner: the spec's paradigm as a jsPsych 8 experiment, served or built as a static site.

`site` writes the page and its pinned JavaScript, `payload` turns the compiler's trials into what the
page shows, `results` turns what the page measured into the shared trial-table row, `server` saves
each trial through the one session writer as it arrives, `cli` is `twinlab web build|serve`.
"""

# this package's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "web", "module": "cli", "function": "app",
     "help": "Browser sessions (jsPsych): a static site, or a local server saving every trial."},
)
