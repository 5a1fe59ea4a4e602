/* twinlab-task: one jsPsych 8 plugin for the task kinds of the general model, one small builder per
 * kind in TASKS (judgment, choice, rating, lexical_decision, self_paced_reading, completion).
 *
 * Every screen change is made inside a requestAnimationFrame callback and its onset is that
 * callback's timestamp; key presses and clicks carry the events' own timeStamp (performance.now()
 * clock). All times are reported in ms from the fixation's frame, the trial's zero, as the
 * runner-independent raw record of participants/tasks/logic.py; twinlab's server derives the row
 * from it with the same code as the PsychoPy runner (and refuses a record that does not fit).
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
  const CHAR_KEYS = { "'": "apostrophe", "-": "minus", ".": "period", ",": "comma" };
  const CHARS = { space: " ", apostrophe: "'", minus: "-", period: ".", comma: "," };

  function keyName(e) {
    const k = e.key;
    if (k === " " || k === "Spacebar") return "space";
    const named = { Escape: "escape", Enter: "return", ArrowLeft: "left", ArrowRight: "right",
                    ArrowUp: "up", ArrowDown: "down", Backspace: "backspace", Tab: "tab" };
    if (named[k]) return named[k];
    if (CHAR_KEYS[k]) return CHAR_KEYS[k];
    return String(k).toLowerCase();
  }
  /** the text a list of key names types (as logic.typed_text) */
  function typedText(keys) {
    const out = [];
    keys.forEach((k) => {
      if (k === "backspace") out.pop();
      else if (k.length === 1 && /\p{L}/u.test(k)) out.push(k);
      else if (CHARS[k] !== undefined) out.push(CHARS[k]);
    });
    return out.join("");
  }
  const isTextKey = (k) => k === "backspace" || (k.length === 1 && /\p{L}/u.test(k)) || CHARS[k] !== undefined;

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }
  const raf = () => new Promise((r) => requestAnimationFrame(r));
  const coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;

  /** The helpers a kind's builder uses: screens painted in rAF callbacks, input with own timestamps. */
  function Ctx(stage, T, C, par) {
    const F = C.frame_ms;
    const ctx = { T, C, V: T.view, stage, raw: { presses: [], pointers: [] }, t0: null, k: 0 };
    ctx.rel = (ts) => Math.round((ts - ctx.t0) * 1000) / 1000;
    ctx.frames = (ms) => (ms <= 0 ? 0 : Math.max(1, Math.round(ms / F)));
    /** paint `nodes` in the first frame for which cond(ts) holds; returns that frame's time (trial clock) */
    ctx.paint = async (nodes, name, cond) => {
      for (;;) {
        const ts = await raf();
        if (!cond || cond(ts)) {
          stage.replaceChildren(...nodes);
          stage.dataset.screen = name;
          stage.dataset.k = ++ctx.k;
          if (ctx.t0 === null) ctx.t0 = ts;
          return ctx.rel(ts);
        }
      }
    };
    /** a whole number of frames after `onset` (trial clock): the next screen's frame */
    ctx.after = (onset, ms) => (ts) => ctx.rel(ts) >= onset + (ctx.frames(ms) - 0.5) * F;
    ctx.waiters = [];
    ctx.onKey = (e) => {
      if (e.repeat || ctx.raw.presses.length >= 390 || ctx.t0 === null) return;
      const name = keyName(e);
      if (!ctx.keys.has(name) && !(ctx.text && isTextKey(name))) return;
      e.preventDefault();
      ctx.raw.presses.push({ key: name, t: ctx.rel(e.timeStamp) });
      ctx.waiters.slice().forEach((w) => w());
    };
    ctx.onPointer = (e) => {
      const box = e.target.closest && e.target.closest(".tl-box");
      if (!box || !ctx.boxesLive || ctx.raw.pointers.length >= 390) return;
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
    if (V.hint) screen.appendChild(textBlock("tl-hint", V.hint));
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

  const TASKS = {
    async judgment(ctx) {
      const V = ctx.V, parts = [];
      if (V.question) parts.push(textBlock("tl-question", V.question));
      if (V.presentation === "rsvp") await rsvp(ctx, V.sentence.split(" "));
      else parts.push(textBlock("tl-sentence", V.sentence));
      return answerScreen(ctx, parts, "tl-judgment");
    },
    async rating(ctx) {
      const V = ctx.V, parts = [];
      if (V.question) parts.push(textBlock("tl-question", V.question));
      if (V.presentation === "rsvp") await rsvp(ctx, V.sentence.split(" "));
      else parts.push(textBlock("tl-sentence", V.sentence));
      return answerScreen(ctx, parts, "tl-scale");
    },
    async lexical_decision(ctx) {
      return answerScreen(ctx, [textBlock("tl-word tl-letters", ctx.V.sentence)], "tl-lexical");
    },
    async choice(ctx) {
      const V = ctx.V, parts = [];
      if (V.question) parts.push(textBlock("tl-question", V.question));
      if (V.prefix) parts.push(textBlock("tl-sentence", V.prefix));
      return answerScreen(ctx, parts, "tl-choice");
    },
    async self_paced_reading(ctx) {
      const V = ctx.V, units = V.units, adv = V.advance_key;
      ctx.keys.add(adv);
      const line = (shown) => {
        const d = el("div", "tl-spr");
        units.forEach((u, i) => {
          d.appendChild(el("span", i === shown ? "tl-spr-word" : "tl-spr-mask", i === shown ? u : u.replace(/\S/g, "-")));
          if (i < units.length - 1) d.appendChild(document.createTextNode(" "));
        });
        const s = el("div", "tl-task");
        s.appendChild(d);
        if (V.hint && !coarse) s.appendChild(textBlock("tl-hint", V.hint));  // (the hint names a key)
        return s;
      };
      // on a touch screen a tap anywhere reads on, as the advance key does (recorded as its press, and in raw.taps)
      ctx.raw.taps = [];
      const onTap = (e) => {
        if (e.target.closest && e.target.closest(".tl-box")) return;
        e.preventDefault();
        ctx.raw.presses.push({ key: adv, t: ctx.rel(e.timeStamp) });
        ctx.raw.taps.push(ctx.rel(e.timeStamp));
        ctx.waiters.slice().forEach((w) => w());
      };
      ctx.stage.addEventListener("pointerdown", onTap);
      const steps = [await ctx.paint([line(null)], "spr", ctx.after(ctx.lastOnset, ctx.lastMs))];
      const count = () => ctx.raw.presses.filter((p) => p.key === adv && p.t >= steps[0]).length;
      for (let k = 1; k <= units.length + 1; k++) {
        await ctx.until(() => count() >= k);
        if (k <= units.length) steps.push(await ctx.paint([line(k - 1)], "spr_" + (k - 1)));
      }
      ctx.raw.steps = steps;
      ctx.stage.removeEventListener("pointerdown", onTap);
      if (!V.question_answers || !V.question_answers.length) { ctx.lastOnset = steps[steps.length - 1]; ctx.lastMs = 0; return null; }
      V.question_answers.forEach((a) => ctx.keys.add(a.key));
      const s = el("div", "tl-task");
      s.appendChild(textBlock("tl-question tl-comprehension", V.question));
      s.appendChild(boxes(ctx, V.question_answers));
      const onset = await ctx.paint([s], "spr_question");
      ctx.raw.question_onset = onset;
      return ctx.answer(V.question_answers, onset, "question_answered_by", "question_answer_time");
    },
    async completion(ctx) {
      const V = ctx.V;
      ctx.keys.add(V.submit_key);
      ctx.text = true;
      const typed = el("div", "tl-typed", "_");
      const s = el("div", "tl-task");
      s.appendChild(textBlock("tl-sentence", V.prefix));
      s.appendChild(typed);
      if (V.hint) s.appendChild(textBlock("tl-hint", V.hint));
      const onset = await ctx.paint([s], "completion", ctx.after(ctx.lastOnset, ctx.lastMs));
      ctx.raw.response_onset = onset;
      let seen = 0;
      for (;;) {
        await ctx.until(() => ctx.raw.presses.length > seen);
        const p = ctx.raw.presses[seen++];
        if (p.t < onset) continue;
        const keys = ctx.raw.presses.slice(0, seen - 1).filter((q) => q.t >= onset && isTextKey(q.key)).map((q) => q.key);
        if (p.key === V.submit_key) {
          if (typedText(keys).trim()) { ctx.raw.submit_time = p.t; ctx.raw.text = typedText(keys); break; }
          continue;
        }
        const text = typedText(keys.concat([p.key]));
        await raf();  // shown in the next frame (the text's own onset is not a measure)
        typed.textContent = text + "_";
      }
      return null;
    },
  };

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
   * compiled trial (each answer's `correct`; completion: the accepted answers, normalised, and the rule) */
  function correctness(T, V, a, raw) {
    if (T.task === "completion") {
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
      const a = await TASKS[T.task](ctx);
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
      document.removeEventListener("keydown", ctx.onKey, true);
      stage.removeEventListener("pointerdown", ctx.onPointer);
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
  TwinlabTaskPlugin.TASKS = Object.keys(TASKS);
  return TwinlabTaskPlugin;
})(jsPsychModule);
