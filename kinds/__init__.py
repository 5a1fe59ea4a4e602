"""The built-in task kinds, one folder each (kinds/<name>/: task, view, page.js, model, analysis, README.md).

Found by experiments/kinds.py (pkgutil over this package's folders, plus the `twinlab.kinds` entry points);
nothing here imports a kind. To add a kind, add a folder (docs/general_model/kinds.md "How to add a kind").
"""
