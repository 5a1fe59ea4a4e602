/* The jsPsych 7 version of tests/data/imports/jspsych/study/acceptability.js (jsPsych 7.3.4 and its 1.x plugins:
 * timeline variables read with jsPsych.timelineVariable(name, true)): the timeline that wrote this folder's
 * data files (tests/support/jspsych_fixture.py runs it in headless Chromium and saves what
 * jsPsych.data.get().csv() / .json() return).
 *
 * URL variables: subject or PROLIFIC_PID (the person), list (A or B: the Latin square), seed (the order),
 * component (all | 1 | 2: JATOS-style, the study split in two components, each its own jsPsych run).
 * window.__screen tells the driver what is on screen; window.__done is set when jsPsych finishes.
 */
const ITEMS = [
  ["The key to the cabinets is on the table.", "The key to the cabinets are on the table."],
  ["The author of the books was famous.", "The author of the books were famous."],
  ["The label on the bottles is torn.", "The label on the bottles are torn."],
  ["The road to the villages was closed.", "The road to the villages were closed."],
  ["The picture of the sisters hangs in the hall.", "The picture of the sisters hang in the hall."],
  ["The owner of the dogs lives nearby.", "The owner of the dogs live nearby."],
  ["The teacher of the pupils is strict.", "The teacher of the pupils are strict."],
  ["The door of the houses was painted.", "The door of the houses were painted."],
  ["The price of the apples has risen.", "The price of the apples have risen."],
  ["The letter from the lawyers was short.", "The letter from the lawyers were short."],
  ["The coach of the players shouts often.", "The coach of the players shout often."],
  ["The smell of the flowers fills the room.", "The smell of the flowers fill the room."],
];
const PRACTICE = [
  {item: "p1", condition: "grammatical", sentence: "The cat sleeps on the sofa.", correct_response: "f"},
  {item: "p2", condition: "ungrammatical", sentence: "The children plays in the garden.", correct_response: "j"},
];
const CONDITIONS = ["grammatical", "ungrammatical"];

const url = (name, fallback) => jsPsych.data.getURLVariable(name) || fallback;
let screenCount = 0;
const show = (kind, extra) => () => { screenCount += 1; window.__screen = Object.assign({kind, n: screenCount}, extra || {}); };

const jsPsych = initJsPsych({on_finish: () => { window.__done = true; }});
const list = url("list", "A");
const component = url("component", "all");
const pid = jsPsych.data.getURLVariable("PROLIFIC_PID");
if (pid) {
  jsPsych.data.addProperties({PROLIFIC_PID: pid, list: list});
} else {
  jsPsych.data.addProperties({subject: url("subject", "anonymous"), list: list});
}
jsPsych.randomization.setSeed(url("seed", "1"));

/* The Latin square: list A gives odd items grammatical, list B the other way round. */
function testItems() {
  return ITEMS.map((pair, i) => {
    const c = (i + (list === "A" ? 0 : 1)) % 2;
    return {item: "i" + (i + 1), condition: CONDITIONS[c], sentence: pair[c], correct_response: c === 0 ? "f" : "j"};
  });
}

const fixation = (phase) => ({
  type: jsPsychHtmlKeyboardResponse, stimulus: '<div style="font-size:40px">+</div>',
  choices: "NO_KEYS", trial_duration: 250, data: {phase: phase}, on_load: show("fixation"),
});

const judgment = (phase) => ({
  type: jsPsychHtmlKeyboardResponse,
  stimulus: () => "<p>" + jsPsych.timelineVariable("sentence", true) + "</p><p>F = good, J = bad</p>",
  choices: ["f", "j"], trial_duration: 4000,
  data: {phase: phase, item: jsPsych.timelineVariable("item"), condition: jsPsych.timelineVariable("condition"),
         correct_response: jsPsych.timelineVariable("correct_response")},
  on_load: () => show("judgment", {correct_response: jsPsych.timelineVariable("correct_response", true),
                                    item: jsPsych.timelineVariable("item", true)})(),
  on_finish: (data) => { data.correct = jsPsych.pluginAPI.compareKeys(data.response, data.correct_response); },
});

const feedback = {
  type: jsPsychHtmlKeyboardResponse, choices: "NO_KEYS", trial_duration: 400, data: {phase: "practice"},
  stimulus: () => jsPsych.data.get().last(1).values()[0].correct ? "<p>Correct!</p>" : "<p>Wrong.</p>",
  on_load: show("feedback"),
};

const instructions = {
  type: jsPsychInstructions, show_clickable_nav: true, on_load: show("instructions"),
  pages: ["<p>You will read sentences.</p>", "<p>Press F if the sentence is good English, J if it is not.</p>"],
};
const practice = {timeline: [fixation("practice"), judgment("practice"), feedback], timeline_variables: PRACTICE};
const native = {
  type: jsPsychHtmlButtonResponse, stimulus: "<p>Is English your native language?</p>", choices: ["Yes", "No"],
  data: {phase: "questionnaire"}, on_load: show("button"),
};
const test = {timeline: [fixation("test"), judgment("test")], timeline_variables: testItems(), randomize_order: true};
const confidence = {
  type: jsPsychSurveyLikert, data: {phase: "questionnaire"}, on_load: show("likert"),
  questions: [{prompt: "How sure were you of your answers?", name: "confidence",
               labels: ["not at all", "a little", "fairly", "very", "completely"]}],
};
const comments = {
  type: jsPsychSurveyText, data: {phase: "questionnaire"}, on_load: show("text"),
  questions: [{prompt: "Any comments?", name: "comments"}],
};

const parts = {all: [instructions, practice, native, test, confidence, comments],
               "1": [instructions, practice, native], "2": [test, confidence, comments]};
jsPsych.run(parts[component]);
