/* self-paced reading: a moving window (a tap reads on on a touch screen), then the comprehension question (kinds/self_paced_reading/page.js).
 * The kind's builder for the page's task plugin (participants/web/js/twinlab-task.js): the plugin paints the
 * fixation, calls the builder, then gives feedback and the ITI; the builder uses the plugin's kit (screens
 * painted in rAF callbacks, input with its own timestamps) and fills ctx.raw, the runner-independent raw record. */
(function () {
  "use strict";
  const { el, textBlock, boxes, answerScreen, rsvp, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("self_paced_reading", async function self_paced_reading(ctx) {
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
      const t = ctx.rel(e.timeStamp);
      if (!ctx.live(t) || ctx.raw.presses.length >= 390) return;
      ctx.raw.presses.push({ key: adv, t });
      ctx.raw.taps.push(t);
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
  });
})();
