/* choice: the question, the sentence prefix and the options (kinds/choice/page.js).
 * The kind's builder for the page's task plugin (participants/web/js/twinlab-task.js): the plugin paints the
 * fixation, calls the builder, then gives feedback and the ITI; the builder uses the plugin's kit (screens
 * painted in rAF callbacks, input with its own timestamps) and fills ctx.raw, the runner-independent raw record. */
(function () {
  "use strict";
  const { el, textBlock, boxes, answerScreen, rsvp, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("choice", async function choice(ctx) {
    const V = ctx.V, parts = [];
    if (V.question) parts.push(textBlock("tl-question", V.question));
    if (V.prefix) parts.push(textBlock("tl-sentence", V.prefix));
    return answerScreen(ctx, parts, "tl-choice");
  });
})();
