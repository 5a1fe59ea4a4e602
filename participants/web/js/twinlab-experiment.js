/* twinlab's browser session: measure the display, get the compiled trials, run them, save each one.
 *
 * Serve mode: the twinlab server compiles this participant's sequence, hands back a per-session
 * token (kept in localStorage so a reload resumes) and saves every trial as it ends.
 * Static mode (`twinlab web build`): the sequences are precompiled per slot in sequences.js; each
 * trial is kept in localStorage (a reload resumes) and appended to JATOS's result data when the
 * page runs inside JATOS; elsewhere the data are offered as a file at the end.
 * Nothing here builds, orders or scores a sequence beyond showing feedback: the server recomputes.
 */
(function () {
  "use strict";
  const C = JSON.parse(document.getElementById("twinlab-config").textContent);
  const params = new URLSearchParams(location.search);
  const X = C.texts;
  const fill = (text, vals) => String(text).replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g,
    (m, k) => (Object.prototype.hasOwnProperty.call(vals, k) ? String(vals[k]) : m));
  const BROWSER_KEYS = { space: " ", return: "Enter", escape: "Escape", left: "ArrowLeft", right: "ArrowRight",
                         up: "ArrowUp", down: "ArrowDown", tab: "Tab", backspace: "Backspace" };
  const touch = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }
  function message(text, extra, name) {
    const page = node("div", "tl-page", text);
    const centre = node("div", "tl-centre");
    centre.appendChild(page);
    document.body.replaceChildren(centre);
    if (extra) page.appendChild(extra);
    document.body.dataset.screen = name || "message";
  }

  /** 121 rAF timestamps: median interval, spread, and whether to refuse (spec's expected rate). */
  function measureRefresh(n) {
    return new Promise((resolve) => {
      const ts = [];
      const f = (t) => { ts.push(t); if (ts.length <= n) requestAnimationFrame(f); else done(); };
      const done = () => {
        const iv = ts.slice(1).map((t, i) => t - ts[i]).sort((a, b) => a - b);
        const median = iv[Math.floor(iv.length / 2)];
        // the period: the mean over the run when no frame was missed (timestamps may come in 0.1 ms
        // steps, so the median alone can be 0.2 % off), else the median
        const regular = iv[iv.length - 1] < 1.5 * median;
        const period = regular ? (ts[ts.length - 1] - ts[0]) / iv.length : median;
        const mean = iv.reduce((a, b) => a + b, 0) / iv.length;
        const sd = Math.sqrt(iv.reduce((a, b) => a + (b - mean) * (b - mean), 0) / iv.length);
        resolve({ n_intervals: iv.length, frame_ms: period, hz: 1000 / period, interval_ms_median: median,
                  interval_ms_min: iv[0],
                  interval_ms_max: iv[iv.length - 1], interval_cv: sd / mean,
                  timestamp_resolution_us: window.crossOriginIsolated ? 5 : 100 });
      };
      requestAnimationFrame(f);
    });
  }
  function refreshPolicy(m) {
    const exp = C.timing.expected_refresh_hz, tol = C.timing.refresh_tolerance_hz;
    const warnings = [];
    if (m.interval_cv > 0.15) warnings.push("frame intervals are irregular (cv " + m.interval_cv.toFixed(2) + ")");
    if (exp !== null && Math.abs(m.hz - exp) > tol) {
      return { refuse: fill(X.refresh_refused_text, { measured: m.hz.toFixed(1), expected: exp }), warnings };
    }
    // as the PsychoPy runner warns: a duration that is not a whole number of frames is rounded
    ["fixation_ms", "word_ms", "gap_ms", "response_ms", "feedback_ms", "panel_delay_ms", "iti_ms"].forEach((k) => {
      const ms = C.timing[k], n = Math.max(1, Math.round(ms / m.frame_ms));
      if (ms > 0 && Math.abs(n * m.frame_ms - ms) > 0.5)
        warnings.push(k + "=" + ms + " ms is " + n + " frames = " + (n * m.frame_ms).toFixed(1) + " ms at " + m.hz.toFixed(2) + " Hz");
    });
    return { refuse: null, warnings };
  }

  function participantId() {
    return params.get("PROLIFIC_PID") || params.get("participant") || params.get("workerId") || "";
  }
  function urlInfo() {
    const out = {};
    ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId"].forEach((k) => {
      if (params.has(k)) out[k] = params.get(k).slice(0, 128);
    });
    return out;
  }

  // ---- serve mode: the twinlab server ---------------------------------------------------------
  function serverBackend(pid, session) {
    const store = "twinlab:" + C.experiment + ":" + pid + ":" + session;
    // the session's token is made here and kept before the first start: if that start's answer is lost
    // (a dropped connection, a killed server), a reload still holds the token, and nobody else can take
    // the session over (the server refuses a start without it)
    let token = localStorage.getItem(store);
    if (!token) {
      const bytes = crypto.getRandomValues(new Uint8Array(32));
      token = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      try { localStorage.setItem(store, token); } catch (e) { /* private mode: this tab keeps it */ }
    }
    const post = async (path, body) => {
      const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                    body: JSON.stringify(body), cache: "no-store" });
      let data = null;
      try { data = await r.json(); } catch (e) { data = { error: "bad response" }; }
      return { status: r.status, data };
    };
    return {
      async start(client) {
        const body = { participant: pid, session, token, info: urlInfo(), client };
        if (params.has("list")) body.list = listParam();  // checked by the server (1..L), 400 otherwise
        const { status, data } = await post("api/start", body);
        if (status !== 200) return { error: data.error || ("HTTP " + status) };
        if (data.token) { token = data.token; localStorage.setItem(store, token); }
        return data;
      },
      async save(result) {
        // a network error, a server that is down or busy (5xx, 408, 429): keep trying, with a notice laid
        // over the page (the page itself stays, so the session goes on once the trial is saved); any other
        // refusal is final: say so, and what to do, instead of promising a retry
        let notice = null;
        const clear = () => { if (notice) notice.remove(); notice = null; delete document.body.dataset.saving; };
        for (let attempt = 0; ; attempt++) {
          let r;
          try { r = await post("api/trial", { participant: pid, session, token, result }); } catch (e) { r = null; }
          if (r && r.status === 200) { clear(); return r.data; }
          if (r && r.status === 409 && r.data.next > result.trial_index) { clear(); return r.data; }  // saved by an earlier try
          if (r && r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) {
            clear();
            message(X.save_refused_text, node("div", "tl-hint", r.data.error || ("HTTP " + r.status)), "save_refused");
            throw new Error("trial refused: " + (r.data.error || r.status));
          }
          document.body.dataset.saving = "retrying";
          document.body.dataset.saveAttempts = String(attempt + 1);
          if (attempt >= 1 && !notice) {
            notice = node("div", "tl-overlay", X.save_error_text);
            document.body.appendChild(notice);
          }
          await new Promise((res) => setTimeout(res, Math.min(5000, 250 * (attempt + 1))));
        }
      },
      async finish() { return null; },
    };
  }

  // ---- static mode: precompiled slots, localStorage, JATOS when present -------------------------
  function fnv1a(s) {
    let h = 0x811c9dc5;
    for (const ch of new TextEncoder().encode(s)) { h ^= ch; h = Math.imul(h, 0x01000193) >>> 0; }
    return h >>> 0;
  }
  // ?list=N: a design's list (experiments/lists.py); a whole number, else sent as given and refused
  function listParam() {
    const v = params.get("list") || "";
    return /^[0-9]{1,6}$/.test(v) ? parseInt(v, 10) : v;
  }
  function staticBackend(pid, session) {
    let slots = C.slots;
    let listError = null;
    if (params.has("list")) {  // only the slots of list N (their list from the build: C.slot_lists)
      const n = listParam();
      if (!C.slot_lists) listError = "list " + n + ": this study has no lists";
      else if (!(Number.isInteger(n) && n >= 1 && n <= C.n_lists)) listError = "list " + n + ": this study has lists 1 to " + C.n_lists;
      else {
        slots = C.slots.filter((s, i) => C.slot_lists[i] === n);
        if (!slots.length) listError = "list " + n + ": no slot of this build reads it (build with more --slots or --list " + n + ")";
      }
    }
    const asked = parseInt(params.get("slot") || "", 10);
    const slot = listError ? null : asked >= 1 && asked <= slots.length ? slots[asked - 1] : slots[fnv1a(pid) % slots.length];
    const store = "twinlab:" + C.experiment + ":" + pid + ":" + session + ":results";
    const seqs = window.TWINLAB_SEQUENCES[slot] || {};
    const seq = seqs[String(session)];
    const saved = JSON.parse(localStorage.getItem(store) || "[]");
    let meta = null;
    return {
      async start(client) {
        if (listError) return { error: listError };
        if (!seq) return { error: "session " + session + " is not part of this study" };
        meta = { twinlab_web: 1, experiment: C.experiment, spec_hash: seq.spec_hash, sequence_hash: seq.sequence_hash,
                 slot_subject_id: slot, participant: pid, session, info: urlInfo(), client };
        if (params.has("list")) meta.list = listParam();  // checked again by `twinlab import web`
        const start = saved.length;
        const status = start >= seq.n_trials ? "finished" : "run";
        return { status, start, n_trials: seq.n_trials, trials: seq.trials.slice(start), spec_hash: seq.spec_hash,
                 sequence_hash: seq.sequence_hash, subject_id: slot };
      },
      async save(result) {
        const record = Object.assign({}, meta, { result });
        saved.push(record);
        localStorage.setItem(store, JSON.stringify(saved));
        if (window.jatos && jatos.appendResultData) await jatos.appendResultData(JSON.stringify(record) + "\n");
        return { next: saved.length };
      },
      async finish() {
        if (window.jatos && jatos.endStudy) return null;
        const blob = new Blob([saved.map((r) => JSON.stringify(r)).join("\n") + "\n"], { type: "application/json" });
        const a = node("a", "tl-download", "data.jsonl");
        a.href = URL.createObjectURL(blob);
        a.download = "twinlab_" + C.experiment + "_" + pid + "_session-" + session + ".jsonl";
        return a;
      },
    };
  }

  // ---- the timeline -----------------------------------------------------------------------------
  function page(jsPsych, text, hint, name) {
    return {
      type: jsPsychHtmlKeyboardResponse,
      stimulus: "", choices: [BROWSER_KEYS[C.keys.continue] || C.keys.continue],
      on_load: () => {
        const el = jsPsych.getDisplayElement();
        const stim = el.querySelector("#jspsych-html-keyboard-response-stimulus");
        stim.replaceChildren(node("div", "tl-page", text));
        // a page that already names the key to press gets no second instruction under it (as in PsychoPy)
        const label = X.continue_key_label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const names = label && new RegExp("(^|[^\\p{L}\\p{N}_])" + label + "($|[^\\p{L}\\p{N}_])", "u").test(text);
        const h = touch ? X.tap_continue_hint : (names && hint === X.continue_hint_filled ? "" : hint);
        if (h) stim.appendChild(node("div", "tl-hint", h));
        document.body.dataset.screen = name;
        if (touch) el.addEventListener("pointerdown", () => jsPsych.finishTrial({ tapped: true }), { once: true });
      },
      data: { twinlab_screen: name },
    };
  }

  function completion(backendExtra) {
    const box = node("div", "tl-completion");
    if (C.sessions > 1 && SESSION < C.sessions) box.appendChild(node("div", "tl-hint",
      fill(X.next_session_text, { next: SESSION + 1, sessions: C.sessions })));
    if (C.completion.code) {
      const [before, after] = fill(X.completion_code_text, { code: "\u0000" }).split("\u0000");
      const p = node("div", "tl-hint", before);
      p.appendChild(node("span", "tl-code", C.completion.code));
      p.appendChild(document.createTextNode(after || ""));
      box.appendChild(p);
    }
    if (C.completion.url) {
      const a = node("a", "tl-return", X.redirect_text);
      a.href = C.completion.url;
      a.rel = "noreferrer";
      box.appendChild(node("div", "tl-hint")).appendChild(a);
    }
    if (backendExtra) box.appendChild(node("div", "tl-hint")).appendChild(backendExtra);
    return box;
  }

  let SESSION = 1;
  async function main() {
    message(X.loading_text, null, "loading");
    const pid = participantId();
    SESSION = parseInt(params.get("session") || "1", 10);
    // for the researcher, under the participant's text: what exactly is wrong
    const detail = (why) => node("div", "tl-hint", why);
    if (!/^[A-Za-z0-9]{1,64}$/.test(pid)) {
      message(X.link_error_text, detail("participant id (PROLIFIC_PID or participant): 1 to 64 letters and digits"), "error");
      return;
    }
    if (!(SESSION >= 1 && SESSION <= C.sessions)) {
      message(X.link_error_text, detail("session " + params.get("session") + ": this study has sessions 1 to " + C.sessions), "error");
      return;
    }
    const refresh = await measureRefresh(120);
    const policy = refreshPolicy(refresh);
    if (policy.refuse) { message(policy.refuse); document.body.dataset.screen = "refused"; return; }
    const client = { user_agent: navigator.userAgent.slice(0, 300), refresh, warnings: policy.warnings,
                     screen: [screen.width, screen.height], window: [innerWidth, innerHeight],
                     device_pixel_ratio: devicePixelRatio, touch, language: navigator.language };
    const backend = C.mode === "serve" ? serverBackend(pid, SESSION) : staticBackend(pid, SESSION);
    const s = await backend.start(client);
    if (s.error) { message(X.link_error_text, detail(s.error), "error"); return; }
    if (s.status === "finished") {
      message(X.already_done_text, completion(null));
      document.body.dataset.screen = "already_done";
      return;
    }
    document.body.replaceChildren();
    const jsPsych = initJsPsych({});
    window.twinlabJsPsych = jsPsych;  // hosts save jsPsych's own data (e.g. jsPsych.data.get().csv() for Pavlovia)
    // every row of jsPsych's own data (what JATOS or Pavlovia save as JSON or CSV) says whose trial it is
    jsPsych.data.addProperties({ twinlab_experiment: C.experiment, twinlab_participant: pid, twinlab_session: SESSION,
                                 twinlab_subject_id: s.subject_id, twinlab_spec_hash: s.spec_hash,
                                 twinlab_sequence_hash: s.sequence_hash });
    const cfg = Object.assign({}, C, { frame_ms: refresh.frame_ms });
    const timeline = [];
    const hint = fill(X.continue_hint, {});
    X.continue_hint_filled = hint;
    if (s.start === 0) C.instructions.forEach((text, i) => timeline.push(page(jsPsych, text, hint, "instructions_" + (i + 1))));
    else timeline.push(page(jsPsych, fill(X.resume_text, { trial: s.start + 1, total: s.n_trials }), hint, "resume"));
    // {trials} in a block's intro: how many of the block's trials this session runs (after --trials)
    const blockSize = {};
    s.trials.forEach((t) => { blockSize[t.block] = (blockSize[t.block] || 0) + 1; });
    s.trials.forEach((trial, j) => {
      const intro = C.block_intros[trial.block];
      if (trial.block_trial_index === 0 && intro)
        timeline.push(page(jsPsych, fill(intro, { trials: blockSize[trial.block] }), X.block_start_hint, "block_intro"));
      timeline.push({ type: trial.task ? jsPsychTwinlabTask : jsPsychTwinlabRsvp, trial, config: cfg, save: (r) => backend.save(r),
                      on_start: () => { document.body.dataset.screen = "trial"; document.body.dataset.trial = trial.trial_index; } });
      const next = s.trials[j + 1];
      if (next && next.block !== trial.block && C.break_after[trial.block]) timeline.push(page(jsPsych, X.break_text, "", "break"));
    });
    await jsPsych.run(timeline);
    const extra = await backend.finish();
    message(X.end_text, completion(extra));
    document.body.dataset.screen = "end";
  }
  main().catch((e) => { console.error(e); if (!document.body.dataset.screen) message(String(e)); });
})();
