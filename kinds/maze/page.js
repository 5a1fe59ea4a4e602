/* maze: each word beside its distractor in two boxes, the left and right keys (E, I) or a tap on a box
 * (phones) picks one (kinds/maze/page.js). The builder for the page's task plugin (twinlab-task.js): the plugin
 * paints the fixation, calls the builder, then gives feedback and the ITI. Each pair's onset is recorded in
 * raw.steps (the frame that presents it), the answers as the kit records them (presses, pointers); they are
 * read by the kind's one rule (kinds/maze/task.py `walk`, mirrored here to know when to go on): an answer
 * counts for word k at or after its pair's onset; a wrong pick ends the sentence (end) or shows the error text
 * under the same pair until the right word is picked (redo). */
(function () {
  "use strict";
  const { el, textBlock, boxes, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("maze", async function maze(ctx) {
    const V = ctx.V, ws = V.words, fs = V.foils, sides = V.sides, keys = V.answers.map((a) => a.key);
    keys.forEach((k) => ctx.keys.add(k));
    const pair = (k, error) => {
      const lr = sides[k] === 0 ? [ws[k], fs[k]] : [fs[k], ws[k]];
      const s = el("div", "tl-task tl-maze");
      s.appendChild(boxes(ctx, V.answers.map((a, i) => Object.assign({}, a, { label: lr[i] }))));
      const e = textBlock("tl-maze-error", error ? V.error_text : "\u00a0");
      e.style.color = "#c33";
      s.appendChild(e);
      if (V.hint && !coarse) s.appendChild(textBlock("tl-hint", V.hint));  // (the hint names the keys)
      return s;
    };
    // every answer in time order (keys first at equal times): what `_responses` reads on the server
    const responses = () => {
      const out = ctx.raw.presses.filter((p) => keys.includes(p.key)).map((p) => ({ t: p.t, side: keys.indexOf(p.key) }));
      if (V.mouse !== false) ctx.raw.pointers.filter((p) => p.target === 0 || p.target === 1)
        .forEach((p) => out.push({ t: p.t, side: p.target }));
      return out.map((r, i) => [r, i]).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]).map((x) => x[0]);
    };
    const walk = (steps) => {  // kinds/maze/task.py `walk`: how far the answers reach
      const first = ws.map(() => null);
      let pos = 0, ended = false;
      for (const r of responses()) {
        if (pos >= ws.length || ended || pos >= steps.length || r.t < steps[pos]) continue;
        const ok = r.side === sides[pos];
        if (first[pos] === null) first[pos] = ok;
        if (ok) pos += 1; else if (V.error_mode === "end") ended = true;
      }
      return { first, reached: pos + (ended ? 1 : 0), ended, completed: pos === ws.length };
    };
    const steps = [], errors = [];
    ctx.raw.steps = steps;
    ctx.boxesLive = true;
    ctx.stage.classList.add("tl-cursor");
    let k = 0, w = walk(steps);
    for (;;) {
      steps.push(await ctx.paint([pair(k, false)], "maze", k === 0 ? ctx.after(ctx.lastOnset, ctx.lastMs) : null));
      let shown = false;
      for (;;) {
        await ctx.until(() => { w = walk(steps); return w.reached > k || w.ended || (!shown && w.first[k] === false); });
        if (w.ended || w.reached > k) break;
        shown = true;
        errors.push(await ctx.paint([pair(k, true)], "maze_error"));
      }
      if (w.ended || w.completed) break;
      k += 1;
    }
    ctx.boxesLive = false;
    ctx.stage.classList.remove("tl-cursor");
    if (errors.length) ctx.raw.error_onsets = errors;
    ctx.lastOnset = steps[steps.length - 1]; ctx.lastMs = 0;
    return { correct: !w.ended && w.first.every((x) => x === true) };  // the feedback screen's
  });
})();
