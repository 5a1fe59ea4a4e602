"""Reproductions of the seeds' model experiments, one command each (`twinlab reproduce <paper>`).

Why a package of its own: a reproduction composes a runner (`model_subjects`: backends, protocols,
batching, resumable sessions) with the analyses (`analysis`: loading, bootstrap, figures), and
`analysis` must never import a runner. Nothing here scores or loads a model by itself; it builds
specs and stimulus files, runs them through the public model_subjects API, and lays the analysis
tables out as the paper does, beside the paper's printed numbers.

Modules:
  common        the reproduction folder (tables, figures, report.html), provenance.json, running one arm
  lampinen2024  seeds/000: Table B1 grid, harder variants, recombined prompts, Figure 5, Figure B1
  hu_levy2023   seeds/003: Direct vs Meta prompts, accuracy and internal consistency
  hu_frank2024  seeds/002: forced choice vs production / metalinguistic judgment over model sizes
  cli           `twinlab reproduce ...` (typer; imports nothing heavy until a command runs)
"""

# this package's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "reproduce", "module": "cli", "function": "app",
     "help": "Reproduce the seeds' model experiments in the papers' own layout."},
)
