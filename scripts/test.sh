#!/usr/bin/env bash
# Runs the whole test suite: real PsychoPy windows (under Xvfb), the bundled model, R/lme4, headless
# Chromium, and real llama-cpp-python and vLLM servers on 127.0.0.1.
# With arguments: one pytest run with them. Without: the default run (every test but the `long` and
# `server` marks), then the marked run of the long real-part tests, then the marked run of the served
# backend against real llama-cpp-python and vLLM servers (docs/benchmarks.md has the times).
# Every pass runs even when an earlier one failed; after each pass and again at the end, its pytest summary
# line is printed with its exit status and wall time (and the three passes' total wall time); the script
# exits 1 if any pass failed.
# The default and long passes run on TWINLAB_TEST_WORKERS pytest-xdist workers (default 2: the 2-core machine's
# CPU-bound tests use one core each, its window and browser sessions mostly wait on the clock), each worker
# with its own Xvfb display (tests/support/xdisplay.py); 1 runs them in one process. The server pass runs its
# test files side by side on the same workers (--dist loadfile: a file's tests stay on one worker, so each file
# starts its server once): the llama.cpp server's file beside the vLLM server's, each server mostly waiting on
# its own client (one thread each).
# Before the passes, `ruff check .` (the rules in pyproject.toml, ruff pinned in requirements.lock): findings fail
# the command at the end like a failed pass (the passes still run).
# TWINLAB_TEST_RUNNER (optional): the command that runs pytest instead of xvfb-run + .venv's pytest
# (tests/project/test_test_script.py puts a stand-in there to check that every pass runs); TWINLAB_RUFF (optional): the
# linter instead of .venv/bin/ruff (the same test's stand-in).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if [[ -n "${TWINLAB_TEST_RUNNER:-}" ]]; then
  PYTEST=("$TWINLAB_TEST_RUNNER")
else
  PYTEST=(xvfb-run -a -s "-screen 0 1280x1024x24" .venv/bin/python -m pytest)
fi
PYTEST+=(-q -rs)
if (($#)); then
  exec "${PYTEST[@]}" --durations=15 "$@"
fi
[[ -t 1 ]] && PYTEST+=(--color=yes)  # the output goes through tee below: keep pytest's colours on a terminal

SUMMARIES=()
FAILED=()
wall() {  # wall SECONDS: "12 min 05 s"
  printf '%d min %02d s' $(($1 / 60)) $(($1 % 60))
}
run_pass() {  # run_pass NAME PYTEST-ARGS...: one pass, its output shown as it comes; remembers its summary and wall time
  local name=$1 log rc summary start took line
  shift
  printf '\033[1m[test]\033[0m %s\n' "$name"
  log=$(mktemp)
  start=$(date +%s)
  "${PYTEST[@]}" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  took=$(($(date +%s) - start))
  summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
            grep -E '^(=+ )?([0-9]+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)|no tests ran)' |
            tail -n 1)
  rm -f "$log"
  line="$name: ${summary:-no pytest summary line} (exit $rc; wall $(wall "$took"))"
  printf '\033[1m[test]\033[0m %s\n' "$line"
  SUMMARIES+=("$line")
  ((rc == 0)) || FAILED+=("$name")
}

WORKERS=${TWINLAB_TEST_WORKERS:-2}
[[ $WORKERS =~ ^[1-9][0-9]*$ ]] || { echo "TWINLAB_TEST_WORKERS must be a whole number of workers, 1 or more, not '$WORKERS'" >&2; exit 2; }
PARALLEL=()
((WORKERS > 1)) && PARALLEL=(-n "$WORKERS" --dist load)  # load: the workers take tests in order, the timing tests first (tests/conftest.py)

ALL_START=$(date +%s)
RUFF=${TWINLAB_RUFF:-.venv/bin/ruff}
printf '\033[1m[test]\033[0m %s\n' 'lint: ruff check .'
"$RUFF" check . || FAILED+=("lint (ruff check . has findings, at the top)")
run_pass 'default run (all but the "long" and "server" marks)' "${PARALLEL[@]}" --durations=15 -m "not server and not long"
run_pass 'marked run: long real-part tests (whole sessions in windows and Chromium, end-to-end commands)' \
  "${PARALLEL[@]}" --durations=10 -m "long and not server"
FILEWISE=()
((WORKERS > 1)) && FILEWISE=(-n "$WORKERS" --dist loadfile)
run_pass 'marked run: the served backend against real llama-cpp-python and vLLM servers on 127.0.0.1' \
  "${FILEWISE[@]}" --durations=5 -m server

printf '\033[1m[test]\033[0m summary\n'
printf '  %s\n' "${SUMMARIES[@]}"
printf '  the three passes: wall %s\n' "$(wall $(($(date +%s) - ALL_START)))"
if ((${#FAILED[@]})); then
  printf '\033[1;31m[test] FAILED:\033[0m %s\n' "$(IFS=';'; echo "${FAILED[*]}")"
  exit 1
fi
printf '\033[1;32m[test] ruff and all three runs passed\033[0m\n'
