"""The model runner's side of the task kinds: each kind's `model` part (kinds/<name>/model.py) says its
`MODEL`, a ModelKind: its protocols by short name (or a resolver, for a kind that names its protocols
itself, as violation detection's recorded names `forced_choice`, `sentence_judgment:<PromptType>`, ... do),
its default protocol, and the replay's typed answer. Every caller (the runner, `run-model`'s checks,
`twinlab context`, the replay) reads this view of the one registry (experiments/kinds.py); none branches on a
kind's name. A test checks it against `experiments.tasks` (`TaskKind.runners` contains "model" exactly for
the kinds with a model part). `surprisal` applies to every kind that says so (`ModelKind.surprisal`).
"""
