#!/usr/bin/env bash
# Runs the whole test suite: real PsychoPy windows (under Xvfb), the bundled model and R/lme4.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec xvfb-run -a -s "-screen 0 1280x1024x24" .venv/bin/python -m pytest -q -rs --durations=15 "$@"
