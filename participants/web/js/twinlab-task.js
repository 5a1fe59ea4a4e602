/* twinlab-task: one jsPsych 8 plugin for the task kinds of the general model; each kind's builder is its
 * folder's page.js (kinds/<kind>/page.js), registered into TASKS with jsPsychTwinlabTask.register.
 *
 * Every screen change is made inside a requestAnimationFrame callback; its onset is the frame that
 * presents it (TwinlabFrames.onset, twinlab-frames.js: the one rule of every kind and the RSVP
 * trial). Key presses, typed characters and clicks carry the events' own timeStamp (performance.now()
 * clock). All times are reported in ms from the fixation's onset, the trial's zero, as the
 * runner-independent raw record of participants/tasks/logic.py; twinlab's server derives the row
 * from it with the same code as the PsychoPy runner (and refuses a record that does not fit).
 * On a touch screen (pointer: coarse) no key is named: key letters and key hints are hidden, a tap
 * reads on (self-paced reading), and a completion is typed into a text field (the on-screen
 * keyboard) and sent with a button.
 * What is shown (answers and their keys, units, option order) comes from the server's payload
 * (participants/web/payload.py): nothing is decided here but what the participant does.
 */
var jsPsychTwinlabTask = (function (jspsych) {
  "use strict";

  const info = {
    name: "twinlab-task",
    version: "1.0.0",
    parameters: {
      trial: { type: jspsych.ParameterType.OBJECT, default: undefined },
      config: { type: jspsych.ParameterType.OBJECT, default: undefined },
      save: { type: jspsych.ParameterType.FUNCTION, default: null },
    },
    data: { twinlab: { type: jspsych.ParameterType.OBJECT } },
  };
  /** The page's typing from the rule the config carries (C.typing: experiments.tasks.record.TYPING, the
   * table logic.typed_text reads): the keys that type which character, the key that deletes, what a
   * letter key is. Nothing of the rule is written here, so the page types what the record types. */
  function Typing(rule) {
    const letter = new RegExp("^" + rule.letter + "$", "u");  // one code point, as Python's len(k) == 1
    const chars = new Map(Object.entries(rule.chars));
    const names = new Map(Object.entries(rule.chars).map(([name, ch]) => [ch, name]));
    const isLetter = (k) => letter.test(k);
    return {
      deleteKey: rule.delete,
      isTextKey: (k) => k === rule.delete || chars.has(k) || isLetter(k),
      /** the text a list of key names types (as typed_text) */
      typedText: (keys) => {
        const out = [];
        keys.forEach((k) => {
          if (k === rule.delete) out.pop();
          else if (isLetter(k)) out.push(k);
          else if (chars.has(k)) out.push(chars.get(k));
        });
        return out.join("");
      },
      /** the key name a typed character stands for (as keyName names its key), or null for one no key names */
      charKey: (ch) => {
        if (names.has(ch)) return names.get(ch);
        const low = ch.toLowerCase();
        return isLetter(low) ? low : null;
      },
    };
  }

  /** PsychoPy's name of a browser key: the table the config carries (C.key_names, the one the RSVP
   * plugin reads too), else the key in lower case */
  function keyName(e, names) {
    return Object.hasOwn(names, e.key) ? names[e.key] : String(e.key).toLowerCase();
  }

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }
  const coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;

  /** The helpers a kind's builder uses: screens painted in rAF callbacks, input with own timestamps. */
  function Ctx(stage, T, C, par) {
    const F = C.frame_ms;
    const ctx = { T, C, V: T.view, stage, raw: { presses: [], pointers: [] }, t0: null, k: 0, typing: Typing(C.typing) };
    ctx.rel = (ts) => Math.round((ts - ctx.t0) * 1000) / 1000;
    ctx.frames = (ms) => (ms <= 0 ? 0 : Math.max(1, Math.round(ms / F)));
    ctx.lastFrame = -Infinity;  // the frame that made the last change
    /** change the screen to `nodes` in the first frame for which cond(ts) holds; returns the change's
     * onset (trial clock): the frame that presents it (TwinlabFrames.onset), normally the next one */
    ctx.paint = async (nodes, name, cond) => {
      let ts;
      do {
        ts = await TwinlabFrames.frame(ctx.lastFrame);
        ctx.lastFrame = ts;
      } while (cond && !cond(ts));
      stage.replaceChildren(...nodes);
      const on = await TwinlabFrames.onset(TwinlabFrames.made());
      stage.dataset.screen = name;  // what is on screen (for tests and screenshots), set at its onset
      stage.dataset.k = ++ctx.k;
      if (ctx.t0 === null) ctx.t0 = on;
      return ctx.rel(on);
    };
    /** the frame in which to change the screen so that the change is presented a whole number of frames
     * after `onset` (trial clock): changes are presented one frame after the frame that makes them */
    ctx.after = (onset, ms) => (ts) => ctx.rel(ts) >= onset + (ctx.frames(ms) - 1.5) * F;
    ctx.waiters = [];
    // input counts from the fixation's onset (the trial's zero) to the trial's last frame
    ctx.live = (t) => ctx.t0 !== null && !ctx.closed && t >= 0;
    ctx.onKey = (e) => {
      if (e.repeat || ctx.raw.presses.length >= 390 || ctx.t0 === null) return;
      const name = keyName(e, C.key_names);
      if (!ctx.keys.has(name) && !(ctx.text && ctx.typing.isTextKey(name))) return;
      // on a touch screen typing is read from the text field's input events only (an on-screen keyboard
      // may send a key's keydown and still insert its character: reading both would type it twice)
      if (coarse && ctx.text && !ctx.keys.has(name)) return;
      e.preventDefault();
      const t = ctx.rel(e.timeStamp);
      if (!ctx.live(t)) return;
      ctx.raw.presses.push({ key: name, t });
      ctx.waiters.slice().forEach((w) => w());
    };
    ctx.onPointer = (e) => {
      const box = e.target.closest && e.target.closest(".tl-box");
      if (!box || !ctx.boxesLive || ctx.raw.pointers.length >= 390 || !ctx.live(ctx.rel(e.timeStamp))) return;
      e.preventDefault();
      ctx.raw.pointers.push({ type: e.pointerType || "mouse", t: ctx.rel(e.timeStamp), target: +box.dataset.pos });
      ctx.waiters.slice().forEach((w) => w());
    };
    ctx.keys = new Set();
    ctx.text = false;
    /** resolves when pred() is true (checked on every key press or click) */
    ctx.until = (pred) => new Promise((resolve) => {
      const w = () => { if (pred()) { ctx.waiters = ctx.waiters.filter((x) => x !== w); resolve(); } };
      ctx.waiters.push(w);
      w();
    });
    /** the first answer (key of `answers` or a click on a box) at or after `onset` */
    ctx.answer = async (answers, onset, byKey, atKey) => {
      const keys = answers.map((a) => a.key);
      const first = () => {
        const k = ctx.raw.presses.find((p) => p.t >= onset && keys.includes(p.key));
        const c = V_mouse(ctx) ? ctx.raw.pointers.find((p) => p.t >= onset && p.target >= 0 && p.target < answers.length) : null;
        const a = k ? { pos: keys.indexOf(k.key), t: k.t, by: "key:" + k.key } : null;
        const b = c ? { pos: c.target, t: c.t, by: c.type } : null;
        return a && b ? (a.t <= b.t ? a : b) : a || b;
      };
      ctx.boxesLive = true;
      stage.classList.add("tl-cursor");
      await ctx.until(() => first() !== null);
      ctx.boxesLive = false;
      stage.classList.remove("tl-cursor");
      const got = first();
      ctx.raw[byKey || "answered_by"] = got.by;
      ctx.raw[atKey || "answer_time"] = got.t;
      return answers[got.pos];
    };
    return ctx;
  }
  const V_mouse = (ctx) => ctx.V.mouse !== false;

  function boxes(ctx, answers, cls) {
    const row = el("div", "tl-answers " + (cls || ""));
    answers.forEach((a, i) => {
      const box = el("div", "tl-box tl-answer");
      box.dataset.pos = i;
      box.appendChild(el("div", "tl-box-label", a.label));
      // the key's letter under its box (not on a touch screen: the stylesheet hides .tl-box-key there)
      if (a.key_label && a.key_label.toLowerCase() !== a.label.toLowerCase()) box.appendChild(el("div", "tl-box-key", a.key_label));
      row.appendChild(box);
    });
    return row;
  }
  function textBlock(cls, text) { return el("div", cls, text); }

  /** judgment, choice, rating, lexical decision: stimulus parts and answer boxes on one screen */
  async function answerScreen(ctx, parts, cls) {
    const V = ctx.V;
    const screen = el("div", "tl-task " + (cls || ""));
    parts.forEach((p) => screen.appendChild(p));
    screen.appendChild(boxes(ctx, V.answers, cls));
    if (V.anchors && (V.anchors[0] || V.anchors[1])) {
      const an = el("div", "tl-anchors");
      an.appendChild(el("span", "", V.anchors[0]));
      an.appendChild(el("span", "", V.anchors[1]));
      screen.appendChild(an);
    }
    if (V.hint && !coarse) screen.appendChild(textBlock("tl-hint", V.hint));  // (a hint names keys)
    V.answers.forEach((a) => ctx.keys.add(a.key));
    const onset = await ctx.paint([screen], ctx.T.task, ctx.after(ctx.lastOnset, ctx.lastMs));
    ctx.raw.response_onset = onset;
    const a = await ctx.answer(V.answers, onset);
    return a;
  }

  async function rsvp(ctx, words) {
    const tm = ctx.C.timing;
    ctx.word_onsets = [];
    for (const w of words) {
      const on = await ctx.paint([el("div", "tl-word", w)], "word", ctx.after(ctx.lastOnset, ctx.lastMs));
      const off = await ctx.paint([], "blank", ctx.after(on, tm.word_ms));
      ctx.word_onsets.push([on, off]);
      ctx.lastOnset = off; ctx.lastMs = tm.gap_ms;
    }
  }

  /** kind name -> its builder, registered by the kinds' page.js (kinds/<kind>/page.js, loaded after this
   * script: participants/web/site.py lists them); a kind presented by another's builder names it (V.builder) */
  const TASKS = {};

  /** a response as experiments.tasks.scoring.normalize_answer compares it, from the rule the trial
   * carries (view.rule, generated from the Python constants): nothing of the rule is written here */
  function normalizeBy(rule, text) {
    const trim = new RegExp("^" + rule.trim + "+|" + rule.trim + "+$", "gu");
    const space = new RegExp(rule.space + "+", "gu");
    let t = String(text).normalize(rule.unicode);
    if (rule.case === "lower") t = t.toLowerCase().normalize(rule.unicode);
    return t.replace(trim, "").replace(space, " ");
  }

  /** correct / incorrect / unknown for the feedback screen: the server's own scoring, carried by the
   * compiled trial (each answer's `correct`; a typed answer: the accepted answers, normalised, and the rule) */
  function correctness(T, V, a, raw) {
    if (V.rule) {  // a typed answer (the kind's view carries its accepted answers and the rule)
      if (!V.accepted || !V.accepted.length) return null;
      return V.accepted.includes(normalizeBy(V.rule, raw.text));
    }
    if (!a || a.correct === undefined) return null;
    return a.correct;
  }

  class TwinlabTaskPlugin {
    constructor(jsPsych) { this.jsPsych = jsPsych; }

    async trial(display, par) {
      const T = par.trial, C = par.config, tm = C.timing;
      const stage = el("div", "tl-stage");
      stage.dataset.trial = T.trial_index;
      stage.dataset.task = T.task;
      display.replaceChildren(stage);
      const ctx = Ctx(stage, T, C, par);
      document.addEventListener("keydown", ctx.onKey, true);
      stage.addEventListener("pointerdown", ctx.onPointer);
      const started_at = new Date().toISOString();
      const fix = await ctx.paint([el("div", "tl-word", "+")], "fixation");
      ctx.lastOnset = fix; ctx.lastMs = tm.fixation_ms;
      const a = await TASKS[ctx.V.builder || T.task](ctx);  // (a kind may be presented by another's builder)
      const correct = correctness(T, ctx.V, a, ctx.raw);
      let feedbackText = null, fbOn = null;
      if (T.feedback && correct !== null) {
        feedbackText = C.texts[correct ? "correct_text" : "incorrect_text"];
        const fb = el("div", "tl-word tl-feedback", feedbackText);
        fb.style.color = correct ? C.colors.correct : C.colors.incorrect;
        fbOn = await ctx.paint([fb], "feedback");
        ctx.lastOnset = fbOn; ctx.lastMs = tm.feedback_ms;
      }
      const itiOn = await ctx.paint([], "iti", fbOn === null ? null : ctx.after(fbOn, tm.feedback_ms));
      const end = await ctx.paint([], "iti", ctx.after(itiOn, tm.iti_ms));
      ctx.closed = true;  // nothing after the trial's last frame belongs to it
      document.removeEventListener("keydown", ctx.onKey, true);
      stage.removeEventListener("pointerdown", ctx.onPointer);
      ctx.raw.presses = ctx.raw.presses.filter((p) => p.t <= end);
      ctx.raw.pointers = ctx.raw.pointers.filter((p) => p.t <= end);
      if (ctx.raw.taps) ctx.raw.taps = ctx.raw.taps.filter((t) => t <= end);
      const result = {
        trial_index: T.trial_index, item_id: T.item_id, task: T.task, frame_ms: C.frame_ms, raw: ctx.raw,
        word_onsets: ctx.word_onsets || [], feedback_onset: fbOn, iti_onset: itiOn, end: end,
        feedback_text: feedbackText, started_at: started_at, ended_at: new Date().toISOString(),
      };
      if (par.save) await par.save(result);
      return { twinlab: result };
    }
  }
  TwinlabTaskPlugin.info = info;
  /** a kind's page.js registers its builder: async (ctx) -> the answer chosen (or null) */
  TwinlabTaskPlugin.register = (name, builder) => {
    if (Object.hasOwn(TASKS, name)) throw new Error("twinlab-task: kind " + name + " registered twice");
    TASKS[name] = builder;
  };
  /** the helpers a kind's builder uses */
  TwinlabTaskPlugin.kit = { el, textBlock, boxes, answerScreen, rsvp, coarse };
  Object.defineProperty(TwinlabTaskPlugin, "TASKS", { get: () => Object.keys(TASKS) });
  return TwinlabTaskPlugin;
})(jsPsychModule);
