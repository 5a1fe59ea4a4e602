"""Power by simulation from a pilot (`twinlab power`, `api.power`): the settings and their checks (`settings`),
the pilot (`pilot`), the design (`design`), the simulations in R (`sim`), the loop over sizes (`run`), power
and its interval (`stats`), the tested terms (`terms`), the analytic first pass (`analytic`), what a run
writes (`report`), one run (`main`) and the command (`cli`).

Importing `analysis.power.cli` (as `twinlab --help` does) runs this file, and it must not load pandas: it
imports nothing (callers import the settings from `analysis.power.settings`)."""
