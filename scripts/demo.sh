#!/usr/bin/env bash
# The main job: a small matched study on the bundled spec.
#   stimuli -> compiled sequences -> model subjects (bundled SmolLM2-135M-Instruct) in the three
#   contexts (none, the eight-shot prompts of seeds/000, and `running`: the humans' instructions,
#   training block and trial-by-trial feedback) with two response protocols -> a human-runner smoke
#   session in a real PsychoPy window -> the report.
# Re-running continues finished work instead of redoing it (sessions resume; complete ones are skipped).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
OUT="${TWINLAB_DEMO_OUT:-demo_out}"
SUBJECTS="${TWINLAB_DEMO_SUBJECTS:-3}"
RUNNING_SUBJECTS="${TWINLAB_DEMO_RUNNING_SUBJECTS:-2}"
TL=.venv/bin/twinlab
SPEC=lakretz2021_nested
mkdir -p "$OUT"
SECONDS=0

echo "== 1. stimuli: the 4096 long-nested test items (8 conditions x 512, seeds/000 design)"
# --force: a re-run replaces the derived files with the same (deterministic) content
$TL stimuli generate --structure long_nested --lexicon test --per-condition 512 --out "$OUT/stimuli/long_nested_test.csv" --force

echo "== 2. the bundled spec, validated and compiled for the first subjects"
$TL validate $SPEC
for s in S01 S02 S03; do
  $TL plan $SPEC --subject "$s" --out "$OUT/plans/$s.csv" --force
done

echo "== 3. model subjects: forced choice (log P of the correct vs the number-flipped verb) in three contexts"
$TL run-model $SPEC --protocol forced_choice --context none              --subjects "$SUBJECTS" --out "$OUT/sessions/forced_choice-none"
$TL run-model $SPEC --protocol forced_choice --context fewshot:eightshot --subjects "$SUBJECTS" --out "$OUT/sessions/forced_choice-eightshot"
$TL run-model $SPEC --protocol forced_choice --context running           --subjects "$RUNNING_SUBJECTS" --out "$OUT/sessions/forced_choice-running"

echo "== 4. model subjects: the humans' violation-detection task put as a question, in the same three contexts"
$TL run-model $SPEC --protocol violation_judgment --context none              --subjects "$SUBJECTS" --out "$OUT/sessions/violation_judgment-none"
$TL run-model $SPEC --protocol violation_judgment --context fewshot:eightshot --subjects "$SUBJECTS" --out "$OUT/sessions/violation_judgment-eightshot"
$TL run-model $SPEC --protocol violation_judgment --context running           --subjects "$RUNNING_SUBJECTS" --out "$OUT/sessions/violation_judgment-running"

echo "== 5. the human runner: a 3-trial autopilot session in a real PsychoPy window under Xvfb"
echo "   (simulated key presses: marked as such in the sidecar and excluded from the human analyses)"
rm -rf "$OUT/human_smoke"
xvfb-run -a -s "-screen 0 1280x1024x24" $TL run-human $SPEC --autopilot --participant autopilot1 --trials 3 --out "$OUT/human_smoke"

echo "== 6. real human data: the public Lakretz et al. (2021) release imported as twinlab sessions"
# The release (results table + raw session logs) is not bundled: point TWINLAB_LAKRETZ_RESULTS and
# TWINLAB_LAKRETZ_LOGS at it, or keep the development sample in ../shared/data/lakretz2021_sample/.
SAMPLE="$ROOT/../shared/data/lakretz2021_sample"
LK_RESULTS="${TWINLAB_LAKRETZ_RESULTS:-}"
LK_LOGS="${TWINLAB_LAKRETZ_LOGS:-}"
if [ -z "$LK_RESULTS$LK_LOGS" ] && [ -d "$SAMPLE" ]; then
  LK_RESULTS="$SAMPLE/dataframe_results_all_trials_sample.csv"; LK_LOGS="$SAMPLE/logs"
fi
HUMANS=()
if [ -n "$LK_RESULTS$LK_LOGS" ]; then
  IMPORT_ARGS=(--out "$OUT/humans" --skip-existing)
  [ -n "$LK_RESULTS" ] && IMPORT_ARGS+=(--results "$LK_RESULTS")
  [ -n "$LK_LOGS" ] && IMPORT_ARGS+=(--logs "$LK_LOGS")
  $TL import lakretz2021 "${IMPORT_ARGS[@]}"
  HUMANS=("$OUT/humans")
else
  echo "   no release found (set TWINLAB_LAKRETZ_RESULTS / TWINLAB_LAKRETZ_LOGS): the report shows models only"
fi

echo "== 7. the report: error rates, first encounter (Table C1), exposures (glmer), humans beside models"
rm -rf "$OUT/report"
$TL analyze "$OUT/sessions" "${HUMANS[@]}" --out "$OUT/report"

echo
echo "demo finished in ${SECONDS}s: open $OUT/report/report.html"
echo "(more human data: import the full release with TWINLAB_LAKRETZ_RESULTS / TWINLAB_LAKRETZ_LOGS set, or add"
echo "   human session folders: $TL analyze $OUT/sessions path/to/human/sessions --out $OUT/report)"
