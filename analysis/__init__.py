"""twinlab analysis: trial tables in, the seeds' analyses out (tables, figures, report.html).

Rooms, each a package named by what a reader looks for (nothing heavy is imported here; R, lme4 through
rpy2, only in `stats.mixed` when a model is fitted; the map is in docs/analysis/code-map.md, "Where the code lives"):

- `api` (the notebook API the CLI uses), `cli` (`twinlab analyze`, `twinlab report`), `pipeline` (run
  everything, write OUT/) with `options` and `option_checks`
- `load`: session CSVs/folders and Lakretz et al. (2021) results (`lakretz`) -> one schema-typed frame;
  `load.prepare` (error, training flag, exposures, groups), `load.frames` (a general design's frame),
  `load.rows` (`--blocks`, the order columns), `load.subjects`, `load.spec_versions`, `load.base`
- `stats`: `mixed` (glmer), `lme4_fits`, `formula` + `formula_checks` + `formula_fit` (the analyst's lme4
  formula: checked, sum-coded, fitted with the random-effects fallback), `ordinal` (clmm, the ordinal family),
  `logistic`, `bootstrap`, `fit_items`
- `measures`: `scoring` (REJECTED trials: the paper and strict rules), `detection` (hits, false alarms, d',
  c), `judgments`, `error_rates`, `design_rates` (rates by factor with F1/F2 CIs, acceptance, d'),
  `model_measures`, `demand_gap` (any two protocols), `task_measures` and `sections`, `reading` (word and region
  reading times and surprisals, the reading rules), `cells` (the trial table's JSON cells)
- `learning`: `general` (first encounters, learning curves, any design), `exposures` (+ `stats.mixed`), `report`
- `twins`: the model as a model of the people; `power`: `twinlab power`
- `report`: `results_folder`, `plan`, `sections`, `tables`, `figures`, `design` and `design_figures` (a
  general design's sections), `reading` and `reading_figures`, `data_section`, `render` (report.html)
- `appendix_c`: seeds/000 Appendix C: the paper's printed numbers and definitions, Figure C2 slopes, Figure C4
- `kind_sections`: what each task kind says on the analysis side (its report section, detection, response
  times, typed answers, reading word by word, its protocols' evaluation methods, its own log-probability table,
  the functions it lends the API): the `analysis` part of its folder
  (kinds/<kind>/analysis.py), found through the one registry of kinds (experiments/kinds.py) when asked
- `simulate`: subjects with known parameters, for tests, dry runs and the demo's simulated humans
  (labelled 'human (simulated)')
"""

# this package's `twinlab` commands (experiments/commands.py mounts them; the module is imported when one runs)
COMMANDS = (
    {"group": "", "name": "analyze", "module": "cli", "function": "analyze_command",
     "help": "Analyse people's and models' trial tables by factor, task and your formula, and write report.html."},
    {"group": "", "name": "report", "module": "cli", "function": "report",
     "help": "Re-render report.html from a results folder (no data, no R needed)."},
    {"group": "", "name": "power", "module": "power.cli", "function": "power",
     "help": "Estimate power by simulation from a pilot of people or of model subjects taken as a hypothesis."},
)
