"""Statistics: mixed models (lme4 through rpy2), the analyst's formula (parsed, checked, fitted), the ordinal family
(clmm), logistic curves,
bootstrap CIs, and a fit as a report item. Nothing heavy here: R starts only when a model is fitted."""
