/* A jsPsych 6.0 acceptability study (the 6.0 API: jsPsych.init, plugin names as strings, key_press key codes,
 * button_pressed, survey answers as a JSON string in `responses`): the timeline that wrote this folder's data
 * files (tests/support/jspsych6_fixture.py runs it in headless Chromium with the npm package jspsych@6.0.4 and
 * saves what jsPsych.data.get().csv() / .json() return).
 *
 * URL variables: subject (the person), list (A or B: the Latin square), rotate (the test order: a rotation),
 * component (all | 1 | 2: the study split in two JATOS components, each its own jsPsych run).
 * window.__screen tells the driver what is on screen; window.__done is set when jsPsych finishes.
 */
var ITEMS = [
  ["The key to the cabinets is on the table.", "The key to the cabinets are on the table."],
  ["The author of the books was famous.", "The author of the books were famous."],
  ["The label on the bottles is torn.", "The label on the bottles are torn."],
  ["The road to the villages was closed.", "The road to the villages were closed."],
  ["The picture of the sisters hangs in the hall.", "The picture of the sisters hang in the hall."],
  ["The owner of the dogs lives nearby.", "The owner of the dogs live nearby."],
  ["The teacher of the pupils is strict.", "The teacher of the pupils are strict."],
  ["The door of the houses was painted.", "The door of the houses were painted."]
];
var PRACTICE = [
  {item: "p1", condition: "grammatical", sentence: "The cat sleeps on the sofa.", correct_response: "f"},
  {item: "p2", condition: "ungrammatical", sentence: "The children plays in the garden.", correct_response: "j"}
];
var CONDITIONS = ["grammatical", "ungrammatical"];

function url(name, fallback) { return jsPsych.data.getURLVariable(name) || fallback; }
var screenCount = 0;
function show(kind, extra) {
  return function () { screenCount += 1; window.__screen = Object.assign({kind: kind, n: screenCount}, extra || {}); };
}
var list = url("list", "A");
var component = url("component", "all");
jsPsych.data.addProperties({subject: url("subject", "anonymous"), list: list});

function testItems() {
  var rows = ITEMS.map(function (pair, i) {
    var c = (i + (list === "A" ? 0 : 1)) % 2;
    return {item: "i" + (i + 1), condition: CONDITIONS[c], sentence: pair[c], correct_response: c === 0 ? "f" : "j"};
  });
  var k = parseInt(url("rotate", "0"), 10) % rows.length;
  return rows.slice(k).concat(rows.slice(0, k));
}

function fixation(phase) {
  return {type: "html-keyboard-response", stimulus: '<div style="font-size:40px">+</div>',
          choices: jsPsych.NO_KEYS, trial_duration: 250, data: {phase: phase}, on_load: show("fixation")};
}
function judgment(phase) {
  return {
    type: "html-keyboard-response",
    stimulus: function () { return "<p>" + jsPsych.timelineVariable("sentence", true) + "</p><p>F = good, J = bad</p>"; },
    choices: ["f", "j"], trial_duration: 4000,
    data: {phase: phase, item: jsPsych.timelineVariable("item"), condition: jsPsych.timelineVariable("condition"),
           correct_response: jsPsych.timelineVariable("correct_response")},
    on_load: function () {
      show("judgment", {correct_response: jsPsych.timelineVariable("correct_response", true),
                        item: jsPsych.timelineVariable("item", true)})();
    },
    on_finish: function (data) {
      data.correct = data.key_press == jsPsych.pluginAPI.convertKeyCharacterToKeyCode(data.correct_response);
    }
  };
}
var feedback = {
  type: "html-keyboard-response", choices: jsPsych.NO_KEYS, trial_duration: 400, data: {phase: "practice"},
  stimulus: function () { return jsPsych.data.get().last(1).values()[0].correct ? "<p>Correct!</p>" : "<p>Wrong.</p>"; },
  on_load: show("feedback")
};
var instructions = {
  type: "instructions", show_clickable_nav: true, on_load: show("instructions"),
  pages: ["<p>You will read sentences.</p>", "<p>Press F if the sentence is good English, J if it is not.</p>"]
};
var practice = {timeline: [fixation("practice"), judgment("practice"), feedback], timeline_variables: PRACTICE};
var native = {type: "html-button-response", stimulus: "<p>Is English your native language?</p>",
              choices: ["Yes", "No"], data: {phase: "questionnaire"}, on_load: show("button")};
var test = {timeline: [fixation("test"), judgment("test")], timeline_variables: testItems()};
var confidence = {type: "survey-likert", data: {phase: "questionnaire"}, on_load: show("likert"),
                  questions: [{prompt: "How sure were you of your answers?",
                               labels: ["not at all", "a little", "fairly", "very", "completely"]}]};
var comments = {type: "survey-text", data: {phase: "questionnaire"}, on_load: show("text"),
                questions: [{prompt: "Any comments?"}]};

var parts = {all: [instructions, practice, native, test, confidence, comments],
             "1": [instructions, practice, native], "2": [test, confidence, comments]};
jsPsych.init({timeline: parts[component], on_finish: function () { window.__done = true; }});
