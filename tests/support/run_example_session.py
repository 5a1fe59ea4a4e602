"""One PsychoPy autopilot session of a spec as `twinlab run-human` compiles it (a subprocess of the tests).

usage: python tests/support/run_example_session.py SPEC OUT PARTICIPANT N
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from experiments.spec import load_spec  # noqa: E402
from participants.runner import HumanRunConfig, run  # noqa: E402


def main() -> int:
    spec, out, pid, n = sys.argv[1:5]
    cfg = HumanRunConfig(spec=load_spec(Path(spec)), participant=pid, out=Path(out), autopilot=True,
                         autopilot_accuracy=0.75, trials=int(n))
    outcome = run(cfg, log=lambda m: print(m, file=sys.stderr))
    print(outcome.status, outcome.n_written, outcome.csv_path)
    return 0 if outcome.status == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
