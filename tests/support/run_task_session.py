"""Run one PsychoPy autopilot session of a bundled task example (a subprocess of the GUI tests).

usage: python tests/support/run_task_session.py KIND SPEC OUT PARTICIPANT SEED N [SHOTS]
(environment: TWINLAB_TEST_TRIALS=K runs only the first K trials; TWINLAB_TEST_RESUME=1 resumes)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from task_examples import example_sequence, load, task_section  # noqa: E402

from participants.runner import HumanRunConfig, run  # noqa: E402


def main() -> int:
    kind, spec, out, pid, seed, n = sys.argv[1:7]
    shots = Path(sys.argv[7]) if len(sys.argv) > 7 else None
    exp = load(Path(spec))
    seq = example_sequence(kind, exp, pid, int(seed), int(n), feedback_first=1)
    cfg = HumanRunConfig(spec=exp, participant=pid, out=Path(out), autopilot=True, autopilot_accuracy=0.75,
                         sequence=seq, task_settings=task_section(kind), screenshots=shots, seed=int(seed),
                         trials=(int(os.environ["TWINLAB_TEST_TRIALS"]) if os.environ.get("TWINLAB_TEST_TRIALS")
                                 else None),
                         resume=os.environ.get("TWINLAB_TEST_RESUME") == "1")
    outcome = run(cfg, log=lambda m: print(m, file=sys.stderr))
    print(outcome.status, outcome.n_written, outcome.csv_path)
    return 0 if outcome.status == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
