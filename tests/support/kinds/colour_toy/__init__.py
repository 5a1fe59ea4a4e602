"""A toy kind for people: is the word a colour? (tests/support/kinds/README.md)"""

# its own screen texts (experiments/screen_texts.py `kind_text`): the other answer's label where the spec
# gives none (English and Italian)
TEXTS = {"en": {"label_other": "Other"}, "it": {"label_other": "Altro"}}
# its own `twinlab` command (experiments/commands.py mounts it; commands.py is imported when it runs)
COMMANDS = (
    {"group": "stimuli", "name": "colour-words", "module": "commands", "function": "colour_words",
     "help": "Write the toy's colour words as a design file (item, colourness, sentence, answer)."},
)
