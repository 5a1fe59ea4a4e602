/* twinlab-frames: when a screen was shown. The ONE onset rule of the browser runner, used by the RSVP
 * trial (twinlab-rsvp.js) and every task kind (twinlab-task.js).
 *
 * A screen is changed inside a requestAnimationFrame callback. That callback's timestamp is the START
 * of the frame being prepared, which can precede the key press the change answers (the press is
 * handled during the frame, the word is drawn by it and reaches the screen with the next one). So
 * the timestamp of the callback that made a change is not its onset: measured that way, self-paced
 * reading had negative display lags of up to one frame.
 *
 * The rule: a change made at `madeAt` (performance.now() right after the DOM mutation) is shown by
 * the first frame whose rAF timestamp is at or after `madeAt`; its onset is that timestamp. Every
 * change is made in a frame's callback, so that frame is normally the next one: an onset is one
 * frame after the callback that made the change (the cost: the recorded onset is one frame later,
 * and a reading time or RT runs from what the participant could have seen). Because the change is
 * made after the event that asked for it was handled, no onset precedes the event that caused it.
 */
var TwinlabFrames = (function () {
  "use strict";

  /** THE rule: whether the frame stamped `ts` shows a change made at `madeAt` (both performance.now()). */
  function presents(madeAt, ts) { return ts >= madeAt; }

  /** performance.now() right after a DOM mutation: what `presents` and `onset` take. */
  function made() { return performance.now(); }

  // the frame whose callback is running (valid until the browser renders it: a task posted from the
  // callback runs only after the rendering step, while the callback's promise continuations run before)
  let current = null;
  function enter(ts) {
    current = ts;
    setTimeout(() => { if (current === ts) current = null; }, 0);
  }

  /** Resolves with the onset of a change made at `madeAt`: the first frame that presents it. */
  function onset(madeAt) {
    return new Promise((resolve) => {
      const f = (ts) => {
        if (presents(madeAt, ts)) { enter(ts); resolve(ts); } else requestAnimationFrame(f);
      };
      requestAnimationFrame(f);
    });
  }

  /** Resolves with the timestamp of a frame later than `after` in which a change can still be made:
   * the frame whose callback is running (when called from its promise continuations, e.g. right after
   * `onset` resolved), else the next frame. So a screen can follow the previous one in the very next
   * frame. */
  function frame(after) {
    if (current !== null && !(current <= after)) return Promise.resolve(current);
    return new Promise((resolve) => requestAnimationFrame((ts) => { enter(ts); resolve(ts); }));
  }

  return { presents, made, onset, frame };
})();
