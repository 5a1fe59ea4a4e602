/* lexical decision: the letter string and the two answers (kinds/lexical_decision/page.js).
 * The kind's builder for the page's task plugin (participants/web/js/twinlab-task.js): the plugin paints the
 * fixation, calls the builder, then gives feedback and the ITI; the builder uses the plugin's kit (screens
 * painted in rAF callbacks, input with its own timestamps) and fills ctx.raw, the runner-independent raw record. */
(function () {
  "use strict";
  const { el, textBlock, boxes, answerScreen, rsvp, coarse } = jsPsychTwinlabTask.kit;

  jsPsychTwinlabTask.register("lexical_decision", async function lexical_decision(ctx) {
    return answerScreen(ctx, [textBlock("tl-word tl-letters", ctx.V.sentence)], "tl-lexical");
  });
})();
