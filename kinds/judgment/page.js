/* judgment: the sentence (whole, or word by word with presentation: rsvp), its question and the labelled answers (kinds/judgment/page.js).
 * The kind's builder for the page's task plugin (participants/web/js/twinlab-task.js): the plugin paints the
 * fixation, calls the builder, then gives feedback and the ITI; the builder uses the plugin's kit (screens
 * painted in rAF callbacks, input with its own timestamps) and fills ctx.raw, the runner-independent raw record. */
(function () {
  "use strict";
  const { el, textBlock, boxes, answerScreen, rsvp, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("judgment", async function judgment(ctx) {
    const V = ctx.V, parts = [];
    if (V.question) parts.push(textBlock("tl-question", V.question));
    if (V.presentation === "rsvp") await rsvp(ctx, V.sentence.split(" "));
    else parts.push(textBlock("tl-sentence", V.sentence));
    return answerScreen(ctx, parts, "tl-judgment");
  });
})();
