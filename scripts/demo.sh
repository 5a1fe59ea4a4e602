#!/usr/bin/env bash
# The main job: a small matched study on the demo spec (lakretz2021_demo: the 40-trial training block of
# lakretz2021_nested, then 144 long-nested test trials, 6 per condition x violation position).
#   stimuli -> compiled sequences -> model subjects (bundled SmolLM2-135M-Instruct): forced choice with no
#   context and with the eight-shot prompts of seeds/000, and the humans' violation question with no context,
#   8 subjects each (48 items per condition x violation) -> a human-runner smoke session in a real PsychoPy
#   window -> humans (the real release if you point at it, else the shared sample, else SIMULATED humans,
#   labelled so everywhere) -> the report.
# Re-running continues finished work instead of redoing it (sessions resume; complete ones are skipped).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export R_LIBS_USER="$ROOT/.rlib" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
OUT="${TWINLAB_DEMO_OUT:-demo_out}"
SUBJECTS="${TWINLAB_DEMO_SUBJECTS:-8}"                  # 8 subjects x 6 = 48 items per condition x violation
RUNNING_SUBJECTS="${TWINLAB_DEMO_RUNNING_SUBJECTS:-0}"  # > 0 adds forced choice in the running context (slow)
SIMULATED_HUMANS="${TWINLAB_DEMO_SIMULATED_HUMANS:-40}"
TL=.venv/bin/twinlab
PY=.venv/bin/python
SPEC=lakretz2021_demo
mkdir -p "$OUT"
SECONDS=0

echo "== 1. stimuli: the 4096 long-nested test items (8 conditions x 512, seeds/000 design)"
# --force: a re-run replaces the derived files with the same (deterministic) content
$TL stimuli generate --structure long_nested --lexicon test --per-condition 512 --out "$OUT/stimuli/long_nested_test.csv" --force

echo "== 2. the demo spec, validated and compiled for the first subjects"
$TL validate $SPEC
for s in m01 m02 m03; do
  $TL plan $SPEC --subject "$s" --out "$OUT/plans/$s.csv" --force
done

echo "== 3. model subjects: forced choice (log P of the correct vs the number-flipped verb), no context and eight-shot"
$TL run-model $SPEC --protocol forced_choice --context none              --subjects "$SUBJECTS" --out "$OUT/sessions/forced_choice-none"
$TL run-model $SPEC --protocol forced_choice --context fewshot:eightshot --subjects "$SUBJECTS" --out "$OUT/sessions/forced_choice-eightshot"
if [ "$RUNNING_SUBJECTS" -gt 0 ]; then
  $TL run-model $SPEC --protocol forced_choice --context running --subjects "$RUNNING_SUBJECTS" --out "$OUT/sessions/forced_choice-running"
fi

echo "== 4. model subjects: the humans' violation-detection task put as a question (read as hits, false alarms, d', c)"
$TL run-model $SPEC --protocol violation_judgment --context none --subjects "$SUBJECTS" --out "$OUT/sessions/violation_judgment-none"

echo "== 5. the human runner: a 3-trial autopilot session in a real PsychoPy window under Xvfb"
echo "   (simulated key presses: marked as such in the sidecar and excluded from the human analyses)"
rm -rf "$OUT/human_smoke"
xvfb-run -a -s "-screen 0 1280x1024x24" $TL run-human $SPEC --autopilot --participant autopilot1 --trials 3 --out "$OUT/human_smoke"

echo "== 6. humans"
# Real data when it is there: the public Lakretz et al. (2021) release (results table + raw session logs;
# docs/demo.md: "Human data") with TWINLAB_LAKRETZ_RESULTS and TWINLAB_LAKRETZ_LOGS; else SIMULATED humans
# (analysis/simulate.py), 40 subjects, enough for the mixed models to converge. The 5-subject development
# sample in ../shared/data/lakretz2021_sample/ only on request (TWINLAB_DEMO_HUMANS=sample): on 4-5
# subjects the mixed models are singular and the report says "do not interpret" 15 times.
# TWINLAB_DEMO_HUMANS=release|sample|simulated|none forces one.
SAMPLE="$ROOT/../shared/data/lakretz2021_sample"
LK_RESULTS="${TWINLAB_LAKRETZ_RESULTS:-}"
LK_LOGS="${TWINLAB_LAKRETZ_LOGS:-}"
HUMAN_SOURCE="${TWINLAB_DEMO_HUMANS:-}"
if [ -z "$HUMAN_SOURCE" ]; then
  if [ -n "$LK_RESULTS$LK_LOGS" ]; then HUMAN_SOURCE=release; else HUMAN_SOURCE=simulated; fi
fi
if [ "$HUMAN_SOURCE" = sample ]; then
  [ -d "$SAMPLE" ] || { echo "TWINLAB_DEMO_HUMANS=sample: $SAMPLE does not exist" >&2; exit 2; }
  LK_RESULTS="$SAMPLE/dataframe_results_all_trials_sample.csv"; LK_LOGS="$SAMPLE/logs"
fi
HUMANS=()
case "$HUMAN_SOURCE" in
  release|sample)
    echo "   real human data ($HUMAN_SOURCE): the Lakretz et al. (2021) format imported as twinlab sessions"
    IMPORT_ARGS=(--out "$OUT/humans" --skip-existing)
    [ -n "$LK_RESULTS" ] && IMPORT_ARGS+=(--results "$LK_RESULTS")
    [ -n "$LK_LOGS" ] && IMPORT_ARGS+=(--logs "$LK_LOGS")
    $TL import lakretz2021 "${IMPORT_ARGS[@]}"
    HUMANS=("$OUT/humans");;
  simulated)
    echo "   no real human data here: $SIMULATED_HUMANS SIMULATED humans, 2 sessions each, on the same spec"
    echo "   (analysis/simulate.py: error rates near seeds/000's Table C1, exposure slope -0.25, subject SD 0.8,"
    echo "   slope SD 0.3); the report calls them 'human (simulated)' everywhere, never pooled with real data"
    if [ ! -d "$OUT/humans_simulated/data" ]; then
      $PY -c "import sys; from analysis.simulate import simulate_sessions; from studies.lakretz2021.simulate import lampinen_like_model; \
simulate_sessions(sys.argv[1], int(sys.argv[2]), spec='$SPEC', error_model=lampinen_like_model(slope_sd=0.3), \
sessions=2, seed=2021, prefix='sim')" \
        "$OUT/humans_simulated" "$SIMULATED_HUMANS"
    fi
    HUMANS=("$OUT/humans_simulated");;
  none) echo "   no humans (TWINLAB_DEMO_HUMANS=none): the report shows models only";;
  *) echo "TWINLAB_DEMO_HUMANS must be release, sample, simulated or none, not '$HUMAN_SOURCE'" >&2; exit 2;;
esac

echo "== 7. the report: error rates, signal detection, first encounter (Table C1), exposures (glmer), humans beside models"
rm -rf "$OUT/report"
$TL analyze "$OUT/sessions" "${HUMANS[@]}" --out "$OUT/report"

echo
echo "demo finished in ${SECONDS}s (humans: $HUMAN_SOURCE): open $OUT/report/report.html"
echo "(real human data: TWINLAB_LAKRETZ_RESULTS=.../dataframe_results_all_trials.csv TWINLAB_LAKRETZ_LOGS=.../logs make demo)"
