/* twinlab-rsvp: one jsPsych 8 plugin for one whole twinlab trial.
 *
 * Fixation, the RSVP units, the response (two-option panel or go/no-go key), feedback and the
 * inter-trial blank are painted from ONE requestAnimationFrame loop. Every screen change has an
 * intended frame (a whole number of frames from the fixation's frame); each callback works out how
 * many frames have elapsed from its own timestamp and paints what is due, so there is no timer
 * between words and a missed callback delays nothing after it. An onset is the timestamp of the
 * frame that presents the change (TwinlabFrames.presents, twinlab-frames.js: the first frame at or
 * after the callback that made it, normally the next one; the rule of every task kind too); key
 * presses and clicks carry the events' own timeStamp (the same clock as performance.now()). The plugin reports raw times; twinlab's server turns them
 * into the trial-table row with the same code for every session (participants/web/results.py).
 */
var jsPsychTwinlabRsvp = (function (jspsych) {
  "use strict";

  const info = {
    name: "twinlab-rsvp",
    version: "1.0.0",
    parameters: {
      /** the compiled trial (twinlab's compiler), as participants/web/payload.py writes it */
      trial: { type: jspsych.ParameterType.OBJECT, default: undefined },
      /** timing, keys, texts and colours of the spec, and the measured frame period */
      config: { type: jspsych.ParameterType.OBJECT, default: undefined },
      /** async function(result): saves the trial (awaited during the inter-trial blank) */
      save: { type: jspsych.ParameterType.FUNCTION, default: null },
    },
    data: { twinlab: { type: jspsych.ParameterType.OBJECT } },
  };

  /** PsychoPy's name of a browser key ("f", "space", "escape", ...): the table the config carries
   * (C.key_names, participants.web.payload.BROWSER_KEY_NAMES, the same for every plugin), else the key
   * in lower case. */
  function keyName(e, names) {
    return Object.hasOwn(names, e.key) ? names[e.key] : String(e.key).toLowerCase();
  }

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }

  class TwinlabRsvpPlugin {
    constructor(jsPsych) { this.jsPsych = jsPsych; }

    trial(display, par) {
      const T = par.trial, C = par.config, F = C.frame_ms, tm = C.timing;
      const frames = (ms) => (ms <= 0 ? 0 : Math.max(1, Math.round(ms / F)));
      const panelMode = C.response === "panel";
      const stage = el("div", "tl-stage");
      // (with dataset.k and dataset.screen, the step on screen, set at its onset: for tests and screenshots)
      stage.dataset.trial = T.trial_index;
      display.replaceChildren(stage);
      const show = (node) => stage.replaceChildren(...(node ? [node] : []));

      // --- the fixed part of the trial: fixation then units, in frames from the fixation frame ---
      const wf = frames(tm.word_ms), gf = frames(tm.gap_ms);
      const schedule = [{ frame: 0, what: "fixation" }];
      let f = frames(tm.fixation_ms);
      T.units.forEach((u, i) => {
        schedule.push({ frame: f, what: "unit", i });
        f += wf;
        if (gf > 0 || i === T.units.length - 1) schedule.push({ frame: f, what: "blank", i });
        f += gf;
      });
      // after the last unit's blank (gap_ms): panel mode shows a fixation then the panel; key mode the prompt
      const endFrame = f - gf;  // the last unit's offset frame
      const respFrames = frames(tm.response_ms);
      if (panelMode) {
        schedule.push({ frame: endFrame + gf, what: "panel_fixation" });
        schedule.push({ frame: endFrame + gf + frames(tm.panel_delay_ms), what: "panel" });
      } else {
        schedule.push({ frame: endFrame + gf, what: "prompt" });
      }

      const fixation = el("div", "tl-word", "+");
      const unitNodes = T.units.map((u) => el("div", "tl-word", u));
      const boxes = {};
      let panelNode = null;
      if (panelMode) {
        panelNode = el("div", "tl-panel");
        if (C.texts.panel_question) panelNode.appendChild(el("div", "tl-question", C.texts.panel_question));
        const row = el("div", "tl-panel-row");
        const order = [C.panel.left, C.panel.left === "violation" ? "no_violation" : "violation"];
        order.forEach((answer) => {
          const box = el("div", "tl-box");
          box.dataset.answer = answer;
          box.appendChild(el("div", "tl-box-label", C.texts["panel_label_" + answer]));
          box.appendChild(el("div", "tl-box-key", C.texts["panel_key_" + answer]));
          boxes[answer] = box;
          row.appendChild(box);
        });
        panelNode.appendChild(row);
      }
      const prompt = el("div", "tl-word", C.texts.response_prompt);
      // a unit, a label or a feedback word wider than the window (a phone held upright) is drawn smaller
      // to fit, never clipped; measured once here, before the first frame
      const fit = (node, room) => {
        const before = node.parentNode;
        if (!before) stage.appendChild(node);
        const width = node.scrollWidth, avail = room();
        if (width > avail && avail > 0) {
          const size = parseFloat(getComputedStyle(node).fontSize);
          node.style.fontSize = Math.floor(size * avail / width) + "px";
        }
        if (!before) node.remove();
        return node;
      };
      const stageRoom = () => stage.clientWidth * 0.94;
      unitNodes.forEach((u) => fit(u, stageRoom));
      fit(prompt, stageRoom);
      if (panelNode) {
        stage.appendChild(panelNode);
        const labels = Object.values(boxes).map((box) => {
          const cs = getComputedStyle(box);
          return fit(box.firstChild, () => box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight));
        });
        // both labels in one size (the smaller): neither answer looks more prominent
        const size = Math.min(...labels.map((l) => parseFloat(getComputedStyle(l).fontSize)));
        labels.forEach((l) => { l.style.fontSize = size + "px"; });
        panelNode.remove();
      }

      // --- input: every key press and every pointer press on an answer box, with its own time ---
      const presses = [], pointers = [];
      const answerOfKey = {};
      if (panelMode) Object.keys(C.panel.keys).forEach((a) => { answerOfKey[C.panel.keys[a]] = a; });
      let phase = "fixation", unitShown = null, panelOn = null, promptOn = null;
      // the keys the trial polls (as PsychoPy's runner: the response key, the panel keys); others are not its input
      const polled = new Set([C.keys.response].concat(Object.keys(answerOfKey)));
      const onKey = (e) => {
        const name = keyName(e, C.key_names);
        if (e.repeat || presses.length >= 200 || !polled.has(name)) return;
        presses.push({ key: name, t: e.timeStamp });
        if (panelMode && answerOfKey[name] !== undefined) e.preventDefault();
        if (!panelMode && name === C.keys.response) e.preventDefault();
      };
      const onPointer = (e) => {
        const box = e.target.closest && e.target.closest(".tl-box");
        if (!box || phase !== "panel" || pointers.length >= 200) return;
        e.preventDefault();
        pointers.push({ type: e.pointerType || "mouse", t: e.timeStamp, answer: box.dataset.answer });
      };
      document.addEventListener("keydown", onKey, true);
      // task.panel.mouse: false: the panel is answered by keys only (a click or tap on it is not an answer)
      const pointerAnswers = panelMode && C.panel.mouse !== false;
      if (pointerAnswers) stage.addEventListener("pointerdown", onPointer);
      else if (panelNode) panelNode.classList.add("tl-keys-only");

      const t = { onsets: [], offsets: [], intended_onset_frames: [], onset_frames: [] };
      let answer = null;  // {response, t, by}
      const firstAnswer = () => {
        if (panelMode) {
          if (panelOn === null) return null;
          const k = presses.find((p) => p.t >= panelOn && answerOfKey[p.key] !== undefined);
          const c = pointers.find((p) => p.t >= panelOn);
          const byKey = k ? { response: answerOfKey[k.key], t: k.t, by: "key:" + k.key } : null;
          const byPtr = c ? { response: c.answer, t: c.t, by: c.type } : null;
          if (byKey && byPtr) return byKey.t <= byPtr.t ? byKey : byPtr;
          return byKey || byPtr;
        }
        if (t.onsets.length === 0) return null;
        const from = C.respond_during_sentence ? t.onsets[0] : t.sentence_end;
        if (from === undefined) return null;
        const k = presses.find((p) => p.t >= from && p.key === C.keys.response);
        return k ? { response: "violation", t: k.t, by: "key:" + k.key } : null;
      };

      return new Promise((resolve) => {
        // changes made and not yet presented: at each frame, those it presents get its timestamp as onset
        let pending = [];
        const made = (set) => pending.push({ at: TwinlabFrames.made(), set });
        // what is on screen, for tests and screenshots: set when the frame presents it
        const onScreen = (what, step, unit) => made(() => {
          stage.dataset.screen = what;
          if (unit !== undefined) stage.dataset.unit = unit;
          stage.dataset.k = step;
        });
        let t0 = null, last = null, n = 0, k = 0, dropped = 0, after = null, fbOn = null, itiOn = null, endTs = null;
        const started_at = new Date().toISOString();
        let feedbackText = null, correct = null, deadlineFrame = null, itiFrame = null;
        const paint = (item, step) => {
          if (item.what === "fixation") { show(fixation); made((on) => { t.fixation = on; }); phase = "fixation"; }
          else if (item.what === "unit") {
            show(unitNodes[item.i]); made((on) => { t.onsets.push(on); }); unitShown = item.i; phase = "sentence";
            t.intended_onset_frames.push(item.frame);
            t.onset_frames.push(n);
          } else if (item.what === "blank") {
            show(null); made((on) => { t.offsets.push(on); });
            if (item.i === T.units.length - 1) {
              made((on) => { t.sentence_end = on; });
              phase = panelMode ? "panel_delay" : "response";
            }
          } else if (item.what === "panel_fixation") { show(fixation); made((on) => { t.panel_fixation = on; }); }
          else if (item.what === "panel") {
            show(panelNode); made((on) => { panelOn = on; }); deadlineFrame = n; phase = "panel";
            if (pointerAnswers) stage.classList.add("tl-cursor");
          } else if (item.what === "prompt") { show(prompt); made((on) => { promptOn = on; }); deadlineFrame = n; }
          onScreen(item.what, step, item.what === "unit" ? item.i : undefined);
        };
        const finish = async () => {
          document.removeEventListener("keydown", onKey, true);
          stage.removeEventListener("pointerdown", onPointer);
          // the trial's input: from the fixation's onset to its last frame
          const inTrial = (p) => p.t >= t.fixation && p.t <= endTs;
          presses.splice(0, presses.length, ...presses.filter(inTrial));
          pointers.splice(0, pointers.length, ...pointers.filter(inTrial));
          const result = {
            trial_index: T.trial_index, item_id: T.item_id, frame_ms: F, unit_frames: wf, gap_frames: gf,
            fixation_onset: t.fixation, unit_onsets: t.onsets, unit_offsets: t.offsets,
            intended_onset_frames: t.intended_onset_frames, onset_frames: t.onset_frames,
            panel_fixation_onset: t.panel_fixation === undefined ? null : t.panel_fixation,
            panel_onset: panelOn, prompt_onset: promptOn, feedback_onset: fbOn, iti_onset: itiOn, end: endTs,
            response: answer ? answer.response : (panelMode ? "none" : "no_violation"),
            answer_time: answer ? answer.t : null, answered_by: answer ? answer.by : null,
            feedback_text: feedbackText, presses: presses, pointers: pointers, dropped_frames: dropped,
            started_at: started_at, ended_at: new Date().toISOString(),
          };
          if (par.save) await par.save(result);
          resolve({ twinlab: result });
        };
        const tick = (ts) => {
          // frames elapsed since the fixation's frame, counted callback by callback: each callback
          // is one frame, or more when frames were missed (then dropped counts them). Counting beats
          // dividing the elapsed time by the frame period: a period measured 0.2 % off (timestamps
          // come in 0.1 ms steps on plain hosts) would put a word 4 s in one frame late.
          if (t0 === null) { t0 = ts; n = 0; }
          else {
            const step = Math.max(1, Math.round((ts - last) / F));
            dropped += step - 1;
            n += step;
          }
          last = ts;
          pending = pending.filter((c) => (TwinlabFrames.presents(c.at, ts) ? (c.set(ts), false) : true));
          if (after === null) {
            // paint what is due; after a stall several entries are due at once: each is recorded at
            // this frame (a unit missed entirely gets onset = offset), only the last stays on screen
            while (k < schedule.length && schedule[k].frame <= n) { paint(schedule[k], k); k++; }
            const a = answer || firstAnswer();
            const ended = t.sentence_end !== undefined;
            // the sentence always runs to its end; then an answer (or the deadline) ends the response phase
            const deadline = panelOn !== null ? panelOn : promptOn;
            const late = deadline !== null && n - deadlineFrame >= respFrames;
            if (ended && ((a && (panelMode ? panelOn !== null : true)) || late)) {
              answer = a && (!late || a.t < deadline + respFrames * F) ? a : null;
              stage.classList.remove("tl-cursor");
              phase = "feedback";
              const response = answer ? answer.response : (panelMode ? "none" : "no_violation");
              correct = panelMode && !answer ? null : response === T.correct_response;
              if (T.feedback) {
                const key = correct === null ? "no_response_text" : correct ? "correct_text" : "incorrect_text";
                feedbackText = C.texts[key];
                const fb = fit(el("div", "tl-word tl-feedback", feedbackText), stageRoom);
                fb.style.color = correct ? C.colors.correct : C.colors.incorrect;
                show(fb);
                made((on) => { fbOn = on; });
                onScreen("feedback", schedule.length);
                after = { frame: n, fb: frames(tm.feedback_ms) };
              } else {
                after = { frame: n, fb: 0 };
              }
              if (after.fb === 0) {
                show(null); made((on) => { itiOn = on; }); after.iti = true;
                onScreen("iti", schedule.length + 1);
              }
            }
          } else if (!after.iti && n - after.frame >= after.fb) {
            show(null); made((on) => { itiOn = on; }); after.iti = true; after.frame = n;
            onScreen("iti", schedule.length + 1);
          }
          if (after !== null && after.iti && itiOn !== null) {
            const itiFrames = frames(tm.iti_ms);
            // (the blank is presented a frame after the frame that made it: it lasts itiFrames from its onset)
            if (n - after.frame >= itiFrames + 1) { endTs = ts; finish(); return; }
          }
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
    }
  }
  TwinlabRsvpPlugin.info = info;
  return TwinlabRsvpPlugin;
})(jsPsychModule);
