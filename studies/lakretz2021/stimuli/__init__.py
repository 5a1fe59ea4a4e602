"""The study's stimuli: the nested-agreement generator (generate.py), its structures (structures.py) and
lexicons (lexicon.py), and the `twinlab stimuli` commands that write them (commands.py). General stimulus
code (the stimulus file, items, visible text) stays in the core's stimuli/."""
