"""twinlab analysis: trial tables in, the seeds' analyses out (tables, figures, report.html).

Modules, each with one job (nothing heavy is imported here; R (lme4 through rpy2) only in `mixed` when a model is fitted):

- `load`: session CSVs/folders and Lakretz et al. (2021) results (`lakretz`) -> one schema-typed frame
- `prepare`: error, training flag, trials_before, exposures, first encounters, groups
- `error_rates`, `first_encounter`, `exposures` (+ `mixed`), `model_measures`: the analyses
- `appendix_c`: seeds/000 Appendix C: the paper's printed numbers and definitions, Figure C2 slopes, Figure C4
- `scoring` (REJECTED trials: the paper and strict rules), `detection` (hits, false alarms, d', c)
- `figures`, `report`, `pipeline` (run everything, write OUT/) with `results_folder`, `data_section`,
  `report_tables`, `sections`; `cli` (`twinlab analyze`, `twinlab report`, `twinlab import`)
- `load_base` (what the readers share; `load` -> `lakretz` -> `load_base`, one way)
- general designs (docs/general_model.md): `api` (the notebook API the CLI uses), `design_rates` (rates by
  factor with F1/F2 CIs, acceptance, d'), `formula` + `formula_fit` (the analyst's lme4 formula: checked,
  sum-coded, fitted with the random-effects fallback), each kind's own analysis in its
  folder (kinds/<kind>/analysis.py: choice, rating (ordinal::clmm), completion, self-paced reading), `demand_gap`
  (any two protocols), `design_report` (the sections) and `design_figures`
- `kind_sections`: what each task kind says on the analysis side (its report section, detection, response
  times, typed answers, its protocols' evaluation methods): the `analysis` part of its folder
  (kinds/<kind>/analysis.py), found through the one registry of kinds (experiments/kinds.py) when asked
- `simulate`: subjects with known parameters, for tests, dry runs and the demo's simulated humans
  (labelled 'human (simulated)')
"""
