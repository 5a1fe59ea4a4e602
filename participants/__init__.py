"""twinlab human participants: the PsychoPy runner (`twinlab run-human`).

Modules, one job each: `cli` (the command), `runner` (a session from checks to closing),
`display` (window, keyboard, refresh measurement), `timing` (the frames-or-clock policy),
`rsvp` (a trial and text pages on screen), `screens` (stimuli, screenshots), `keys` (keyboard and
key injection), `autopilot` (simulated answers for demos and tests), `rows` (trial rows and the
PsychoPy-style CSV), `dialog` (participant info). Nothing here imports PsychoPy at module level
except through functions that run a session.
"""
