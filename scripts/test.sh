#!/usr/bin/env bash
# Runs the whole test suite: real PsychoPy windows (under Xvfb), the bundled model, R/lme4, headless
# Chromium, and real llama-cpp-python and vLLM servers on 127.0.0.1.
# With arguments: one pytest run with them. Without: the default run (every test but the `long` and
# `server` marks), then the marked run of the long real-part tests, then the marked run of the served
# backend against real llama-cpp-python and vLLM servers (README "The two commands" has the times).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
PYTEST=(xvfb-run -a -s "-screen 0 1280x1024x24" .venv/bin/python -m pytest -q -rs)
if (($#)); then
  exec "${PYTEST[@]}" --durations=15 "$@"
fi
printf '\033[1m[test]\033[0m default run (all but the "long" and "server" marks)\n'
"${PYTEST[@]}" --durations=15 -m "not server and not long"
printf '\033[1m[test]\033[0m marked run: long real-part tests (whole sessions in windows and Chromium, end-to-end commands)\n'
"${PYTEST[@]}" --durations=10 -m "long and not server"
printf '\033[1m[test]\033[0m marked run: the served backend against real llama-cpp-python and vLLM servers on 127.0.0.1\n'
"${PYTEST[@]}" --durations=5 -m server
