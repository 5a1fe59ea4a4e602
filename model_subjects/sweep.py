"""Sweeps: models x contexts x protocols x subjects from one YAML file, resumable, local or on Slurm.

    # sweep.yaml
    spec: lakretz2021_nested
    out: sweeps/lakretz                 # relative to the YAML file's folder
    models:
      - smollm2                          # a model name, or a mapping with settings:
      - {model: ~/models/llama-70b, dtype: bfloat16, device: auto}   # device auto: accelerate's device map
      - {model: smollm2, backend: llamacpp, options: {n_ctx: 8192}}  # a registered backend and its settings
    contexts: [none, "fewshot:eightshot", running]
    protocols: [forced_choice, violation_judgment]
    subjects: 4                          # or {count: 4, first: 1, prefix: m}
    learning: {mode: weights, lr: 1e-4, steps: 1, update_on: feedback}   # optional (default: context)
    trials: 40                           # optional: first N trials of each subject
    slurm: {timeout_min: 120, gpus_per_node: 1, slurm_partition: gpu}   # submitit parameters

Each (model, context, protocol) cell writes its sessions to `<out>/<model>/<context>/<protocol>/`.
Running the same sweep again skips every cell whose sessions are all completed (without loading
the model) and continues unfinished sessions from their next trial. `--executor slurm` submits one
job per model through submitit (`--executor submitit-local` runs the same jobs as local processes).
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from experiments import options as o
from experiments.cli_common import fail
from experiments.options import OptionError
from experiments.run_options import run_options
from experiments.run_prep import prepare_run
from experiments.session import SessionError
from experiments.spec import SpecError, yaml_load
from model_subjects.backends.base import ModelLoadError
from model_subjects.backends.registry import DEFAULT_BACKEND, OWN_OPTIONS, canonical_name, load_backend
from model_subjects.context import ContextError
from model_subjects.run_checks import protocol_and_context
from model_subjects.runner import RunConfig, RunError, Runner, subject_ids
from model_subjects.weights import LearningSettings, check_learn_blocks, check_learning, context_label
from stimuli.input_rules import finite_number
from stimuli.textfile import read_text_file


class SweepError(ValueError):
    """A sweep file that cannot be run; the message names the file and the field."""


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Optional[str] = None  # None: the bundled default
    backend: str = DEFAULT_BACKEND  # a name from model_subjects.backends.registry (transformers, llamacpp, openai)
    options: dict[str, Any] = Field(default_factory=dict)  # backend-specific settings, by name
    dtype: str = "float32"
    device: str = "cpu"
    batch_size: Union[int, str] = "auto"
    add_bos: bool = False
    threads: Optional[int] = 1
    label: Optional[str] = None  # folder name (default: from the model name)

    @field_validator("batch_size")
    @classmethod
    def _batch(cls, v: Union[int, str]) -> Union[int, str]:
        if isinstance(v, str) and v.lower() != "auto" or isinstance(v, int) and v < 1:
            raise ValueError("must be a positive whole number or 'auto'")
        return v

    @field_validator("options")
    @classmethod
    def _options(cls, v: dict[str, Any]) -> dict[str, Any]:
        own = sorted(k for k in v if k in OWN_OPTIONS)
        if own:
            raise ValueError(f"{', '.join(own)} is a field of the model entry itself, not a backend option; "
                             f"write it beside 'options' (e.g. {own[0]}: ...)")
        return v

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        try:
            return canonical_name(v)
        except ModelLoadError as exc:
            raise ValueError(str(exc)) from None

    @property
    def folder(self) -> str:
        """Folder name: the label (checked by `validate_sweep`), or a local model's folder/file name or the
        model id (+ `_<backend>` for a backend other than transformers, so the same model through two
        backends never shares a folder)."""
        if self.label:
            return self.label
        if not self.model:
            name = "smollm2"
        else:
            local = Path(self.model).expanduser()
            name = _slug(local.name if local.exists() else self.model)
        return name if self.backend == DEFAULT_BACKEND else f"{name}_{self.backend}"


class Subjects(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = 1  # the bounds are run-model's (experiments/options.py), checked by validate_sweep
    first: int = 1
    prefix: str = "m"


class Learning(BaseModel):
    """How every cell's subjects learn (model_subjects/weights.py); checked by run-model's rules."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "context"  # context | weights | both
    lr: float = 1e-4
    steps: int = 1
    adapter: str = "full"
    update_on: str = "feedback"
    optimizer: str = "sgd"
    rank: int = 8
    learn_blocks: list[str] = []  # the blocks whose trials teach (run-model --learn-blocks; empty: every block)


class Sweep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec: str
    out: str = "sweep_out"
    models: list[Union[str, ModelEntry]] = Field(min_length=1)
    contexts: list[str] = Field(default_factory=lambda: ["none"], min_length=1)
    protocols: list[Optional[str]] = Field(default_factory=lambda: [None], min_length=1)
    subjects: Union[int, Subjects] = 1
    trials: Optional[int] = Field(None, ge=1)
    session: int = 1
    seed: Optional[int] = None
    learning: Learning = Field(default_factory=Learning)
    slurm: dict[str, Any] = Field(default_factory=dict)

    def model_entries(self) -> list[ModelEntry]:
        return [m if isinstance(m, ModelEntry) else ModelEntry(model=m) for m in self.models]

    def subject_settings(self) -> Subjects:
        return self.subjects if isinstance(self.subjects, Subjects) else Subjects(count=self.subjects)


@dataclass(frozen=True)
class Cell:
    model_index: int
    context: str
    protocol: Optional[str]
    out: Path


_UNION_TAGS = {"str", "int", "ModelEntry", "Subjects"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "default"


def load_sweep(path: str | Path) -> tuple[Sweep, Path]:
    """The validated sweep and its output root (relative paths are taken from the YAML's folder)."""
    p = Path(path)
    if not p.exists():
        raise SweepError(f"{p}: no such sweep file")

    # the spec's reader: UTF-8 text only (line named), no key twice, no binary files
    data = yaml_load(read_text_file(p, SweepError, "sweep"), p, SweepError)
    if not isinstance(data, dict):
        raise SweepError(f"{p}: a sweep is a mapping with spec, models, contexts, protocols, subjects")
    try:
        sweep = Sweep.model_validate(data)
    except ValidationError as exc:
        # a union field (a name or a mapping) reports one error per branch: the most specific one
        # (longest location) says what is wrong; the branch names (str, ModelEntry) are not fields
        err = max(exc.errors(), key=lambda e: len(e["loc"]))
        where = ".".join(str(x) for x in err["loc"] if x not in _UNION_TAGS)
        raise SweepError(f"{p}: field '{where}': {err['msg']}") from None
    out = Path(sweep.out).expanduser()
    if not out.is_absolute():
        out = p.resolve().parent / out
    return sweep, out


def cells(sweep: Sweep, out: Path) -> list[Cell]:
    """Every (model, context, protocol) combination with its own session folder."""
    res = []
    for k, m in enumerate(sweep.model_entries()):
        for c in sweep.contexts:
            for pr in sweep.protocols:
                res.append(Cell(k, c, pr, out / m.folder / _slug(_cell_context(sweep, c)) / _slug(pr or "default")))
    return res


def _cell_context(sweep: Sweep, context: str) -> str:
    """A cell's context folder name: the context, and `+weights:<update-on>` when weights learn."""

    ln = sweep.learning
    return context_label(context, LearningSettings(mode=ln.mode, update_on=ln.update_on, blocks=tuple(ln.learn_blocks)))


def sweep_plan(sweep: Sweep, where: Path | None = None):
    """The sweep's run plan (experiments/run_prep.py): its spec loaded and checked once, each subject's
    sequence compiled once for every cell (all cells share the spec, session, seed and trials).
    SweepError naming the file and field 'spec' when `where` is given; else SpecError as it comes."""

    try:
        return prepare_run(sweep.spec, session=sweep.session, seed=sweep.seed, trials=sweep.trials)
    except SpecError as exc:
        if where is None:
            raise
        raise SweepError(f"{where}: field 'spec': {exc}") from None


def validate_sweep(sweep: Sweep, out: Path, where: Path, executor: str = "local"):
    """Every job of the sweep, by run-model's rules, before the first runs: the spec, each model
    (path, weights, dtype, device, threads, batch size), labels, contexts and protocols for every
    subject, the executor and its Slurm parameters. SweepError naming the file and field.
    Returns the sweep's plan (`sweep_plan`)."""

    plan = sweep_plan(sweep, where)
    exp = plan.exp
    if not 1 <= sweep.session <= exp.sessions:
        raise SweepError(f"{where}: field 'session': {exp.name} has {exp.sessions} session(s), got {sweep.session}")
    entries = sweep.model_entries()
    subj = "subjects.count" if isinstance(sweep.subjects, Subjects) else "subjects"
    names = {"subjects": subj, "first_subject": "subjects.first", "subject_prefix": "subjects.prefix"}
    try:
        for k, m in enumerate(entries):
            if m.label is not None:
                o.label(f"field 'models.{k}.label'", m.label)
            o.path_component(f"field 'models.{k}' (its folder name)", m.folder)
            for c in sweep.contexts:
                for pr in sweep.protocols:
                    cfg = run_config(sweep, Cell(k, c, pr, out))
                    run_options(cfg, lambda f, k=k: (
                        f"field '{names.get(f) or (f if f in ('trials', 'out') else f'models.{k}.{f}')}'"))
                    check_learning(cfg, lambda f, k=k: f"field '{_learning_field(f, k)}'")
                    check_learn_blocks(cfg, exp, lambda f, k=k: f"field '{_learning_field(f, k)}'")
                    try:
                        protocol_and_context(cfg, exp)
                    except o.OptionError as exc:
                        raise o.OptionError(f"contexts/protocols ({c!r}, {pr!r}): {exc}") from None
        o.unique_labels("field 'models'", [m.folder for m in entries])
        for field, values in (("contexts", [_slug(c) for c in sweep.contexts]),
                              ("protocols", [_slug(p or "default") for p in sweep.protocols])):
            o.unique_labels(f"field '{field}'", values)
        check_executor(executor, sweep.slurm)
    except o.OptionError as exc:
        raise SweepError(f"{where}: {exc}") from None
    return plan


def _learning_field(field: str, model_index: int) -> str:
    """Where a learning setting lives in a sweep file (the backend is the model entry's)."""
    if field == "backend":
        return f"models.{model_index}.backend"
    return "learning.mode" if field == "learning" else f"learning.{field}"


def check_executor(executor: str, slurm: dict[str, Any]) -> None:
    """The executor exists here and every Slurm parameter is one submitit knows, with a sane value."""


    if executor not in ("local", "slurm", "submitit-local"):
        raise OptionError(f"--executor must be local, slurm or submitit-local, not {executor!r}")
    if executor == "local":
        return
    if importlib.util.find_spec("submitit") is None:
        raise OptionError(f"--executor {executor} needs the submitit package, which is not installed")
    from submitit import AutoExecutor  # the cluster runner loads only when a sweep is submitted
    from submitit.slurm.slurm import SlurmExecutor  # the cluster runner loads only when a sweep is submitted

    known = set(AutoExecutor._valid_parameters()) | {f"slurm_{p}" for p in SlurmExecutor._valid_parameters()}
    for key, value in slurm.items():
        if key not in known:
            raise OptionError(f"field 'slurm.{key}': not a submitit/Slurm parameter (known: "
                              f"{', '.join(sorted(AutoExecutor._valid_parameters()))}, or slurm_<sbatch option>)")
        _no_shell(key, value)
        check_slurm_number(key, value)
    if executor == "slurm" and shutil.which("sbatch") is None:
        raise OptionError("--executor slurm: Slurm is not available here (no sbatch on PATH); "
                          "use --executor local or submitit-local, or run on the cluster's login node")


SLURM_WHOLE = ("timeout_min", "nodes", "cpus_per_task", "tasks_per_node", "slurm_array_parallelism")
SLURM_MAX_GB = 1_000_000.0  # a bound, so that an absurd request is refused here, not queued for ever


def check_slurm_number(key: str, value: Any) -> None:
    """submitit's numeric parameters: whole numbers (timeout_min 90.5 would crash inside submitit), memory a
    finite number of GB (nan passes `< 1` and inf runs); checked here, before any job is written."""

    if key == "mem_gb":
        gb = finite_number(value)
        if gb is None or not 0 < gb <= SLURM_MAX_GB:
            raise OptionError(f"field 'slurm.mem_gb': must be a finite number of GB above 0 (at most "
                              f"{SLURM_MAX_GB:g}), got {value!r}")
    elif key in SLURM_WHOLE or key.startswith(("gpus_", "slurm_gpus_", "slurm_cpus_")):
        n = value if isinstance(value, int) and not isinstance(value, bool) else None
        if n is None or n < (0 if "gpus" in key else 1):
            what = ("a whole number of at least 0" if "gpus" in key
                    else "a positive number (a whole number of at least 1)")
            raise OptionError(f"field 'slurm.{key}': must be {what}, got {value!r}")


SHELL_PARAMETERS = ("slurm_setup", "slurm_teardown", "slurm_srun_args")  # submitit writes them as shell


def _no_shell(key: str, value: Any) -> None:
    """A sweep file is data: submitit writes `setup`/`teardown` lines (and `srun_args`) into the job's shell
    script as they are, and `#SBATCH` lines from the parameters, so those three are refused, and every
    other value must be a number, a truth value or one line of text (a newline would start a shell line)."""

    if key in SHELL_PARAMETERS:
        raise OptionError(f"field 'slurm.{key}': submitit writes it into the job script as shell commands; a "
                          "sweep file is data, never code (set the environment up before running `sweep`)")
    items = value.items() if key == "slurm_additional_parameters" and isinstance(value, dict) else [(None, value)]
    for name, v in items:
        where = f"slurm.{key}" + (f".{name}" if name is not None else "")
        if name is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", str(name)):
            raise OptionError(f"field '{where}': an sbatch option name is letters, digits, '-' and '_'")
        if not isinstance(v, (str, int, float, bool)) or (isinstance(v, str) and not v.isprintable()):
            raise OptionError(f"field '{where}': must be a number, true/false or one line of printable text, "
                              f"got {v!r}")


def run_config(sweep: Sweep, cell: Cell):
    m = sweep.model_entries()[cell.model_index]
    s = sweep.subject_settings()
    return RunConfig(spec=sweep.spec, model=m.model, backend=m.backend, backend_options=dict(m.options),
                     subjects=s.count, first_subject=s.first,
                     subject_prefix=s.prefix, context=cell.context, protocol=cell.protocol, out=cell.out,
                     trials=sweep.trials, session=sweep.session, seed=sweep.seed, add_bos=m.add_bos,
                     dtype=m.dtype, device=m.device, batch_size=m.batch_size, threads=m.threads,
                     learning=sweep.learning.mode, lr=sweep.learning.lr, steps=sweep.learning.steps,
                     adapter=sweep.learning.adapter, update_on=sweep.learning.update_on,
                     optimizer=sweep.learning.optimizer, rank=sweep.learning.rank,
                     learn_blocks=tuple(sweep.learning.learn_blocks))


def cell_done(sweep: Sweep, cell: Cell, plan: Any = None) -> bool:
    """All sessions of the cell are completed (read from the sidecars; no model needed). `plan`: the
    sweep's (`sweep_plan`), shared by its cells so that each subject's sequence is compiled once."""

    cfg = run_config(sweep, cell)
    plan = plan or sweep_plan(sweep)
    for sid in subject_ids(cfg):
        side = plan.paths(cell.out, sid)[1]
        if not side.exists():
            return False
        try:
            meta = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return False
        planned = plan.n_planned(plan.sequence(sid))  # the sweep's session (session 1 was counted before)
        if meta.get("status") != "completed" or int(meta.get("n_trials_written", 0)) < planned:
            return False
    return True


def run_model_cells(sweep_path: str, model_index: int) -> dict[str, Any]:
    """Every unfinished cell of one model, with the model loaded once (the unit of a Slurm job)."""

    sweep, out = load_sweep(sweep_path)
    plan = sweep_plan(sweep)
    todo = [c for c in cells(sweep, out) if c.model_index == model_index]
    pending = [c for c in todo if not cell_done(sweep, c, plan)]
    report: dict[str, Any] = {"model_index": model_index, "skipped": len(todo) - len(pending), "ran": [],
                              "trials_run": 0}
    if not pending:
        return report
    m = sweep.model_entries()[model_index]
    backend = load_backend(m.model, backend=m.backend, dtype=m.dtype, device=m.device, add_bos=m.add_bos,
                           batch_size=m.batch_size, threads=m.threads, **m.options)
    for c in pending:
        summary = Runner(run_config(sweep, c), backend, plan=plan).run()
        report["ran"].append(str(c.out))
        report["trials_run"] += summary.trials_run
    return report


def run_sweep(sweep_path: str | Path, executor: str = "local", validated: bool = False) -> list[dict[str, Any]]:
    """Run a sweep here (`local`) or as one submitit job per model (`slurm`, `submitit-local`);
    every job is validated first unless the caller just did (`validated`)."""
    sweep, out = load_sweep(sweep_path)
    if not validated:
        validate_sweep(sweep, out, Path(sweep_path), executor)
    path = str(Path(sweep_path).resolve())
    n = len(sweep.model_entries())
    if executor == "local":
        return [run_model_cells(path, k) for k in range(n)]
    import submitit  # the cluster runner loads only when a sweep is submitted

    ex = submitit.AutoExecutor(folder=out / "submitit", cluster="slurm" if executor == "slurm" else "local")
    params = dict(sweep.slurm)
    if executor != "slurm":  # slurm-only parameters mean nothing to the local executor
        params = {k: v for k, v in params.items() if not k.startswith("slurm_")}
    if params:
        ex.update_parameters(**params)
    jobs = [ex.submit(run_model_cells, path, k) for k in range(n)]
    return [j.result() for j in jobs]


def sweep_command(
    file: Path = typer.Argument(..., help="sweep YAML (models x contexts x protocols x subjects)"),
    executor: str = typer.Option("local", "--executor", help="local | slurm | submitit-local (one job per model)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="list the cells and whether they are done; run nothing"),
) -> None:
    """Run a sweep of model subjects; finished sessions are skipped, unfinished ones continue."""

    try:
        sweep, out = load_sweep(file)
        plan = validate_sweep(sweep, out, file, "local" if dry_run else executor)
        all_cells = cells(sweep, out)
        if dry_run:
            for c in all_cells:
                typer.echo(f"{'done   ' if cell_done(sweep, c, plan) else 'pending'} {c.out}")
            return
        reports = run_sweep(file, executor, validated=True)
    except (SweepError, SpecError, RunError, ContextError, SessionError, ModelLoadError) as exc:
        fail(str(exc))
    ran = sum(len(r["ran"]) for r in reports)
    skipped = sum(r["skipped"] for r in reports)
    trials = sum(r["trials_run"] for r in reports)
    typer.echo(f"sweep {file}: {len(all_cells)} cell(s): ran {ran}, skipped {skipped} (done); "
               f"{trials} trial(s) run -> {out}")
