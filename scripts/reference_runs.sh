#!/usr/bin/env bash
# Reference runs for "no number moves": run the current tree into OUT, then a changed tree into
# another folder, then `python scripts/compare_runs.py OLD NEW`. Covers every bundled spec's plans (two
# subjects), model subjects on every bundled spec (two subjects, the first trials), the Lakretz sample
# imported and analysed, simulated Lakretz humans with the demo's models analysed, and each general spec's
# model sessions analysed. Run from the tree to test (PYTHONPATH=$PWD so its code is the one imported).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:?usage: scripts/reference_runs.sh OUT}"
export PYTHONPATH="$ROOT" R_LIBS_USER="$ROOT/.rlib" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
PY="$ROOT/.venv/bin/python"
TL=("$PY" -m experiments.cli)
SAMPLE="$ROOT/../shared/data/lakretz2021_sample"
mkdir -p "$OUT/plans"
for spec in experiments/specs/*.yaml; do
  name=$(basename "$spec" .yaml)
  for s in s01 s02; do "${TL[@]}" plan "$name" --subject "$s" --out "$OUT/plans/$name-$s.csv" >/dev/null; done
  "${TL[@]}" run-model "$name" --subjects 2 --trials 16 --quiet --out "$OUT/sessions/$name" >/dev/null
done
if [ -d "$SAMPLE" ]; then
  "${TL[@]}" import lakretz2021 --results "$SAMPLE/dataframe_results_all_trials_sample.csv" --logs "$SAMPLE/logs" \
    --out "$OUT/humans_sample" >/dev/null
  "${TL[@]}" analyze "$OUT/humans_sample" --out "$OUT/report_sample" >/dev/null
fi
"$PY" -c "import sys; from analysis.simulate import simulate_sessions; from studies.lakretz2021.simulate import lampinen_like_model; \
simulate_sessions(sys.argv[1], 12, spec='lakretz2021_demo', error_model=lampinen_like_model(slope_sd=0.3), \
sessions=1, seed=2021, prefix='sim')" "$OUT/humans_simulated"
"${TL[@]}" analyze "$OUT/sessions/lakretz2021_demo" "$OUT/humans_simulated" --out "$OUT/report_simulated" >/dev/null
for d in "$OUT"/sessions/*; do
  name=$(basename "$d")
  case "$name" in lakretz2021_*) continue;; esac
  "${TL[@]}" analyze "$d" --out "$OUT/report_$name" >/dev/null || echo "analyze $name: exit $?" >> "$OUT/analyze_errors.txt"
done
echo "reference runs written to $OUT"
