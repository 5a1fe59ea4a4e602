"""Write the Lakretz et al. (2021) format fixtures:
tests/fixtures/lakretz2021/{logs/, dataframe_results_all_trials.csv}.

Invented trials in exactly the release's format (tests/support/lakretz_synthetic.py); the
tests regenerate them and check the committed files are byte-identical, so edit the generator,
then run:  python scripts/make_lakretz_fixtures.py
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.lakretz_synthetic import write_fixtures  # noqa: E402

if __name__ == "__main__":
    target = ROOT / "tests" / "fixtures" / "lakretz2021"
    if target.exists():
        shutil.rmtree(target)
    rel = write_fixtures(target)
    print(f"wrote {len(rel.log_files)} logs and {rel.table.name} ({sum(1 for _ in open(rel.table)) - 1} rows) to "
          f"{target}")
