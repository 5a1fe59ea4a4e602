#!/usr/bin/env bash
# The main job: generate stimuli, compile the bundled spec for a few subjects, run model subjects
# with the bundled model in several contexts, and write the report comparing them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
OUT="${TWINLAB_DEMO_OUT:-demo_out}"
TL=.venv/bin/twinlab
mkdir -p "$OUT"
echo "== 1. stimuli: the 4096 long-nested test items (seeds/000 design)"
$TL stimuli generate --structure long_nested --lexicon test --per-condition 512 --out "$OUT/stimuli/long_nested_test.csv"
echo "== 2. the bundled spec, compiled for three subjects"
$TL validate lakretz2021_nested
for s in S01 S02 S03; do
  $TL plan lakretz2021_nested --subject "$s" --out "$OUT/plans/$s.csv"
done
echo "demo finished: outputs in $OUT/"
