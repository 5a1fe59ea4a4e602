"""Where an import may write, checked before any work: the project's one output rules (experiments/outputs.py)
applied to --out, its data/ and spec/ folders, --spec-out and the items file beside it.

Why: a link planted in --out (`data/`, `spec/`) would take the sessions elsewhere; with --force, --spec-out or
the items file written beside it could replace a results file or the --map of the same command; an --out
inside an input folder would be read back as input by the next import of that folder; and a dataset folder
holds one study (a second study's sessions beside the first would be analysed as one dataset).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from experiments.options import OptionError
from experiments.outputs import check_not_in_inputs, check_output_folder, check_target, same_file
from experiments.session import keyword_value
from participants.imports.records import ImportInputError, Mapping

SAME_NAME = ("; a study's name is --spec-out's file name, else the study's own (PsychoPy's expName) or "
             "imported_<tool>: to add to the same study, give the --spec-out of its first import")


def check_outputs(paths: list[Path], mapping: Optional[Mapping], out: Path, spec_out: Optional[Path],
                  study_name: Optional[str] = None) -> None:
    """Refuse (ImportInputError) every write the import may not make; `study_name` (once the study is read)
    adds the items file beside --spec-out and the one-study rule of --out."""
    inputs = [("the results", Path(p)) for p in paths]
    if mapping is not None and mapping.source:
        inputs.append(("--map", Path(mapping.source)))
    try:
        check_output_folder("--out", Path(out), subfolders=("data", "spec"), files=("dataset_description.json",),
                            input_folders=inputs)
        if spec_out is not None:
            targets = [("--spec-out", Path(spec_out))]
            if study_name is not None:
                targets.append(("the items file beside --spec-out", Path(spec_out).parent / f"{study_name}_items.csv"))
            for name, target in targets:
                for what, src in inputs:
                    if same_file(target, src):
                        raise OptionError(f"{name} {target} is the command's own input ({what}); it is never "
                                          "written over, even with --force: choose another --spec-out")
                check_not_in_inputs(name, target, [(w, s) for w, s in inputs if s.is_dir()])
                check_target(name, target)
    except OptionError as exc:
        raise ImportInputError(str(exc)) from None
    if study_name is not None:
        check_one_study(Path(out), study_name)


def check_one_study(out: Path, name: str) -> None:
    """--out holds no other study's sessions or spec (with or without --add or --force: a dataset folder is one
    study's; import another study into its own --out)."""

    mine = f"study-{keyword_value(name)}_"
    data = out / "data"
    if data.is_dir():
        other = next((f for f in sorted(data.iterdir()) if f.name.startswith("study-") and not f.name.startswith(mine)
                      and f.name.endswith(("_data.csv", "_data.json"))), None)
        if other is not None:
            raise ImportInputError(f"--out {out} holds sessions of another study ({other.name}); a dataset folder "
                                   f"holds one study, and these files are study {name!r}: nothing was written (import "
                                   f"them into their own --out{SAME_NAME})")
    spec = out / "spec"
    if spec.is_dir():
        other = next((f for f in sorted(spec.glob("*.y*ml")) if f.stem != name), None)
        if other is not None:
            raise ImportInputError(f"--out {out} holds the spec of another study ({other.name}); a dataset folder "
                                   f"holds one study, and these files are study {name!r}: nothing was written (import "
                                   f"them into their own --out{SAME_NAME})")
