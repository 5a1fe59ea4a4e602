"""`twinlab new NAME`: a study folder to start from (spec, items, a README with the commands).

Why a command and not a page to copy from: the folder it writes validates as it is, so a newcomer's first
`twinlab validate` succeeds and every later change is one they made. The template is a yes/no judgment
study with one two-level factor, a Latin square over two lists and a short practice block with feedback
(docs/tutorial/first-study.md walks through it). Nothing existing is replaced without --force, and each
file is written to a temporary name and renamed.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import typer

from experiments.atomic import atomic_write_text
from experiments.cli_common import console, fail

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_]+$")  # the spec's own rule for `name:` (experiments/spec_model.py)

SPEC = """\
# {name}: a yes/no judgment study (written by `twinlab new`; edit it to make it yours).
# Each item has two versions (the factor `agreement`: match, mismatch); a Latin square gives two lists,
# so each participant reads every item once, half of them in each condition.
name: {name}
description: >
  Is the sentence acceptable English? One factor (agreement: match, mismatch), Latin square over 2 lists.
language: en
seed: 1
design:
  file: items.csv
  factors:
    agreement: [match, mismatch]
  lists: latin_square
blocks:
  - name: practice
    role: practice
    feedback: true
    intro_text: "First, a few practice sentences. You will see whether your answer was right."
    break_after: false   # straight on to the test (true shows a pause screen)
  - name: test
    role: test
    feedback: false
    intro_text: "Now the main part begins. There is no feedback from here on."
    break_after: false
timing:
  fixation_ms: 500
  feedback_ms: 800
  iti_ms: 300
task:
  kind: judgment
  presentation: whole
  question: "Is this sentence acceptable English?"
  labels:
    - {{value: "yes", text: "Acceptable", key: f}}
    - {{value: "no", text: "Not acceptable", key: j}}
texts:
  instructions:
    - >
      You will read sentences, one at a time. For each, decide whether it is acceptable English.
      Press F for acceptable and J for not acceptable (or click the answer).
    - "Press SPACE to begin."
  end_text: "Thank you! The experiment is over."
"""

ITEMS = """\
item,agreement,role,sentence,answer
1,match,test,The key to the cabinets is on the table.,yes
1,mismatch,test,The key to the cabinets are on the table.,no
2,match,test,The author that the critics admire writes well.,yes
2,mismatch,test,The author that the critics admire write well.,no
3,match,test,The dogs near the fence bark at night.,yes
3,mismatch,test,The dogs near the fence barks at night.,no
4,match,test,The teacher of the pupils is kind.,yes
4,mismatch,test,The teacher of the pupils are kind.,no
5,match,test,The boxes on the shelf are heavy.,yes
5,mismatch,test,The boxes on the shelf is heavy.,no
6,match,test,The letter from the friends was long.,yes
6,mismatch,test,The letter from the friends were long.,no
7,match,test,The girls in the choir sing loudly.,yes
7,mismatch,test,The girls in the choir sings loudly.,no
8,match,test,The car behind the trucks is fast.,yes
8,mismatch,test,The car behind the trucks are fast.,no
p1,,practice,The cat is asleep.,yes
p2,,practice,The cats is asleep.,no
"""

README = """\
# {name}

A twinlab study: `study.yaml` (the spec) and `items.csv` (one row per item x condition; `role` says
test or practice; `answer` is the correct answer, one of the labels' values). Edit both, then:

```bash
twinlab validate study.yaml                                   # blocks, trial counts, lists; refuses bad input
twinlab plan study.yaml --subject S01                         # one participant's trial sequence
twinlab web serve study.yaml --out people                     # then open http://127.0.0.1:8000/?participant=P01
twinlab run-human study.yaml -p P01 --out people              # or in a PsychoPy window
twinlab run-model study.yaml --subjects 2 --protocol meta --context none --out models-none
twinlab run-model study.yaml --subjects 2 --protocol meta --context running --out models-running
twinlab run-model study.yaml --replay people --protocol meta --out replay   # a model reads each person's session
twinlab analyze people models-none models-running replay --out report      # report/report.html
twinlab power people --group human --formula "correct ~ agreement + (1 | subject) + (1 | item)" \\
  --term agreement --effect 0.5 --sd subject=0.8 --sd item=0.5 --subjects 16,32 --items 8 --out power
```

The tutorial that walks through these steps: docs/tutorial/first-study.md in the twinlab repository.
"""


def study_files(name: str) -> dict[str, str]:
    """The files of a new study called `name`: file name -> text."""
    return {"study.yaml": SPEC.format(name=name), "items.csv": ITEMS, "README.md": README.format(name=name)}


def new(name: str = typer.Argument(..., help="the study's name (letters, digits, _): the folder and the spec's name"),
        out: Optional[Path] = typer.Option(None, "--out", help="the folder to write (default: ./NAME)"),
        force: bool = typer.Option(False, "--force",
                                   help="replace study.yaml, items.csv and README.md if there")) -> None:
    """Start a study of your own: a folder with a spec, an items file and a README with the commands."""
    if not NAME_PATTERN.match(name):
        fail(f"study name {name!r}: use letters, digits and _ only (it becomes the spec's `name:`)")
    folder = out if out is not None else Path(name)
    if folder.exists() and not folder.is_dir():
        fail(f"{folder}: exists and is not a folder")
    files = study_files(name)
    present = [f for f in files if (folder / f).exists()]
    if present and not force:
        fail(f"{folder}: already has {', '.join(present)}; nothing was written (--force replaces them)")
    for file_name, text in files.items():
        atomic_write_text(folder / file_name, text)
    console.print(f"wrote {folder}/: study.yaml, items.csv, README.md. Next: "
                  f"twinlab validate {folder / 'study.yaml'}", highlight=False, soft_wrap=True)
