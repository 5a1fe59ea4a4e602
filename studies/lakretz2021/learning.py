"""The Lakretz cells as a learning configuration (analysis/learning/general.py): structure x condition x
violation position, only inner and outer violations scored; built from the study's declared report plan
(REPORT_PLANS in __init__), so the cell and the default focus are written once."""
from __future__ import annotations

from analysis.learning.general import plan_config
from studies.lakretz2021 import REPORT_PLANS

LAKRETZ = plan_config(REPORT_PLANS[0])
