/* completion: the prefix and a text field (typed keys recorded; on a touch screen the field's input events) (kinds/completion/page.js).
 * The kind's builder for the page's task plugin (participants/web/js/twinlab-task.js): the plugin paints the
 * fixation, calls the builder, then gives feedback and the ITI; the builder uses the plugin's kit (screens
 * painted in rAF callbacks, input with its own timestamps) and fills ctx.raw, the runner-independent raw record. */
(function () {
  "use strict";
  const { el, textBlock, boxes, answerScreen, rsvp, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("completion", async function completion(ctx) {
    // A text field, so that a touch screen opens its on-screen keyboard. What is recorded is the key log:
    // on a desktop, every typing key and backspace from its keydown (the page types it into the field
    // itself: the field shows exactly what the recorded keys type), as before; on a touch screen an
    // on-screen keyboard sends no key names (keydown "Unidentified"), so there each change of the field
    // is read from its input event as the keys that make it (backspaces, then the characters, at the
    // event's time; raw.input_presses lists their times). A paste on a desktop is read the same way.
    // The submit key, or on a touch screen the button under the field, sends the answer.
    const V = ctx.V;
    ctx.keys.add(V.submit_key);
    ctx.text = true;
    ctx.raw.taps = [];
    ctx.raw.input_presses = [];
    const { typedText, isTextKey, charKey, deleteKey } = ctx.typing;  // (the shipped rule: C.typing)
    const s = el("div", "tl-task");
    s.appendChild(textBlock("tl-sentence", V.prefix));
    const form = el("form", "tl-typed-form");
    const field = el("input", "tl-typed");
    Object.assign(field, { type: "text", autocomplete: "off", spellcheck: false, name: "answer" });
    field.setAttribute("autocapitalize", "off");
    field.setAttribute("autocorrect", "off");
    field.setAttribute("enterkeyhint", "done");
    field.setAttribute("inputmode", "text");
    field.setAttribute("aria-label", V.prefix);
    form.appendChild(field);
    let button = null;
    if (coarse) {
      button = el("button", "tl-submit", ctx.C.texts.continue_button);
      button.type = "button";
      form.appendChild(button);
    }
    s.appendChild(form);
    if (V.hint && !coarse) s.appendChild(textBlock("tl-hint", V.hint));  // (it names the submit key)
    let onset = null;
    const typedKeys = () => ctx.raw.presses.filter((q) => q.t >= onset && isTextKey(q.key)).map((q) => q.key);
    const show = (text) => { if (field.value !== text) field.value = text; };
    const press = (key, t) => {
      if (ctx.raw.presses.length >= 390) return false;
      ctx.raw.presses.push({ key, t });
      return true;
    };
    const onInput = (e) => {
      const t = ctx.rel(e.timeStamp), was = typedText(typedKeys()), now = field.value;
      if (onset !== null && t >= onset && ctx.live(t)) {
        const a = Array.from(was), b = Array.from(now);
        let i = 0;
        while (i < a.length && i < b.length && a[i] === b[i]) i++;
        const keys = a.slice(i).map(() => deleteKey).concat(b.slice(i).map(charKey).filter((k) => k !== null));
        keys.forEach((k) => { if (press(k, t)) ctx.raw.input_presses.push(t); });
      }
      show(typedText(typedKeys()));  // what the record types (a character no key names is not kept)
      ctx.waiters.slice().forEach((w) => w());
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const t = ctx.rel(e.timeStamp);
      if (!coarse || onset === null || t < onset || !ctx.live(t)) return;  // a touch screen's ENTER as the button
      if (press(V.submit_key, t)) ctx.raw.taps.push(t);
      ctx.waiters.slice().forEach((w) => w());
    };
    field.addEventListener("input", onInput);
    form.addEventListener("submit", onSubmit);
    if (button) button.addEventListener("pointerdown", onSubmit);  // (preventDefault keeps the keyboard open)
    onset = await ctx.paint([s], "completion", ctx.after(ctx.lastOnset, ctx.lastMs));
    ctx.raw.response_onset = onset;
    if (!coarse) field.focus({ preventScroll: true });  // (a phone opens its keyboard on the participant's tap)
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
      show(typedText(typedKeys()));  // (all recorded so far: a field being composed on is left alone)
    }
    field.removeEventListener("input", onInput);
    form.removeEventListener("submit", onSubmit);
    field.readOnly = true;
    field.blur();
    return null;
  });
})();
