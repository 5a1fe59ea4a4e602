"""What every reproduction shares: arms run through model_subjects, the folder layout, provenance.

Folder layout (OUT/):
    sessions/<model>/<subtask>/<items-hash>/<arm>/data/*_data.csv   twinlab sessions (resumable)
    stimuli/*.csv      the stimulus files the specs read;  specs/*.yaml  the specs the arms ran
    tables/*.csv       every table;  figures/*.png  every figure
    provenance.json    prompts (text + SHA-256), models (name, weight hash, dtype, BOS, device),
                       package versions, command line, seeds, per-arm timings
    report.html        tables and figures, the paper's printed numbers beside ours

An arm is one (spec, context, protocol) run of one model: a `model_subjects.Runner` over one or more
model subjects. The session folder is keyed by the items' content hash, so a re-run with the same
arguments reuses every finished session (the runner skips completed sessions and resumes
unfinished ones), and different items never reuse old sessions.
"""
from __future__ import annotations

import hashlib
import html
import importlib.metadata
import json
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import yaml

from analysis.load import load
from analysis.report.render import CSS, table_html
from experiments.atomic import atomic_write_text
from experiments.cli_common import progress_bar as bar
from experiments.session import SessionError
from experiments.spec import SpecError, load_spec
from experiments.studies import study_part
from model_subjects import RunConfig, Runner
from model_subjects.runner import RunError
from stimuli.input_rules import spreadsheet_safe_frame
from stimuli.prompts import get_prompt_set

# the study whose cells the reproduced papers re-used; its `papers` module names them (and holds its generator)
CELLS_STUDY = "lakretz2021"


def cells_study() -> Any:
    """The study's `papers` module (studies/<study>/papers.py), through the registry (experiments/studies.py):
    the cells the papers test, their names for them, the generator; no reproduction names a cell."""

    return study_part(CELLS_STUDY, "papers")


class ReproError(RuntimeError):
    """A reproduction that cannot run; the message names the option, file or value."""


@dataclass
class RunOptions:
    """What every reproduction takes: the models, the items, seeds and how the models run."""

    models: list[str | None]
    out: Path
    items: list[Path] = field(default_factory=list)
    items_per_condition: int | None = None
    dependency: str | None = None
    seed: int = 1
    n_boot: int = 2000
    add_bos: bool = False
    dtype: str = "float32"
    device: str = "cpu"
    batch_size: int | str = 32  # or "auto"
    threads: int | None = 1
    quiet: bool = False
    backend: str | None = None  # the registry's name (None: transformers); `--backend` of every reproduce command
    backend_options: dict[str, Any] = field(default_factory=dict)  # `-B KEY=VALUE` (a server's url, ...)

    def check_selection(self) -> None:
        """The item selection can work (the CLI checks these too; this guards the Python API)."""
        if self.dependency not in (None, "inner", "outer"):
            raise ReproError(f"--dependency must be inner or outer, not {self.dependency!r}")
        if self.items_per_condition is not None and self.items_per_condition < 1:
            raise ReproError("--items-per-condition must be at least 1")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def backend_suffix(backend: str | None) -> str:
    """Sessions and caches of another backend never mix with the transformers ones (as a sweep names its cells)."""
    return "" if backend in (None, "", "transformers") else f"_{backend}"


def slug(name: str) -> str:
    """A folder-safe name for a model (path or hub id)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name).strip("/"))
    return s[-80:] or "model"


@dataclass
class Arm:
    """One run: a spec, a context mode and a protocol, for one model (several model subjects)."""

    name: str  # unique within the reproduction, folder-safe
    spec_path: Path
    context: str  # none | fewshot:<set or group>
    protocol: str
    subjects: int
    out: Path  # the session root of this arm
    labels: dict[str, str] = field(default_factory=dict)  # subtask, prompt, ... (for the tables)
    first_subject: int = 1  # subject ids m<first>.. (the prompts of one group are m01, m02, m03)


@dataclass
class ArmResult:
    arm: Arm
    seconds: float
    trials_run: int
    trials_total: int
    cpu_seconds: float = 0.0  # CPU time of this process (all threads) during the arm


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:  # own_file (twinlab wrote it)
        atomic_write_text(path, text)
    return path


def run_arm(arm: Arm, backend: Any, run_options: dict[str, Any],
            progress: Callable[[int, int | None], None] | None = None) -> ArmResult:
    """Run (or resume, or skip when finished) one arm through the model_subjects runner."""

    t0, c0 = time.perf_counter(), time.process_time()
    try:
        exp = load_spec(arm.spec_path)
        cfg = RunConfig(spec=str(arm.spec_path), model=run_options.get("model"), subjects=arm.subjects,
                        first_subject=arm.first_subject, context=arm.context, protocol=arm.protocol, out=arm.out,
                        add_bos=run_options.get("add_bos", False), dtype=run_options.get("dtype", "float32"),
                        device=run_options.get("device", "cpu"), batch_size=run_options.get("batch_size", 32),
                        threads=run_options.get("threads"), max_new_tokens=run_options.get("max_new_tokens", 8))
        runner = Runner(cfg, backend, exp=exp, progress=progress)
        summary = runner.run()
    except (SpecError, RunError, SessionError) as exc:  # SessionLockedError: another writer holds a session
        raise ReproError(f"arm {arm.name}: {exc}") from None
    total = sum(int(s["trials"]) for s in summary.subjects)
    return ArmResult(arm, time.perf_counter() - t0, summary.trials_run, total, time.process_time() - c0)


def load_arms(arms: list[Arm]) -> pd.DataFrame:
    """The trial tables of the arms (analysis.load), each row tagged with its arm's labels."""

    frames = []
    for arm in arms:
        df, _ = load([arm.out])
        frames.append(df.assign(arm=arm.name, **arm.labels))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# ---------------------------------------------------------------------------------- provenance
def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in ("twinlab", "torch", "transformers", "tokenizers", "safetensors", "gguf", "numpy", "pandas", "scipy",
                 "matplotlib", "pydantic", "typer", "rich"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def git_commit() -> str | None:
    head = Path(__file__).resolve().parents[1] / ".git"
    try:
        if head.is_file():  # a worktree: "gitdir: ..."
            head = Path(head.read_text().split(":", 1)[1].strip())
        ref = (head / "HEAD").read_text().strip()
        if ref.startswith("ref:"):
            path = head / ref.split(" ", 1)[1]
            if not path.exists():
                common = (head / "commondir").read_text().strip() if (head / "commondir").exists() else ".."
                path = (head / common / ref.split(" ", 1)[1]).resolve()
            return path.read_text().strip()
        return ref
    except OSError:
        return None


def prompt_provenance(names: list[str]) -> dict[str, dict[str, str]]:
    """Each prompt set used: its exact text (as it precedes a trial, with the newline) and SHA-256."""

    out = {}
    for n in names:
        p = get_prompt_set(n)
        text = p.text + "\n"
        out[n] = {"text": text, "sha256": sha256_text(text), "source": p.source, "kind": p.kind}
    return out


def input_hashes(options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """SHA-256 of every input the options name (--items, --pairs, --humans): a file's bytes, or for a
    folder the hash of its files' relative paths and hashes (sorted), with the number of files."""
    out: dict[str, dict[str, Any]] = {}
    for key in ("items", "pairs", "humans"):
        for given in options.get(key) or []:
            p = Path(given)
            if p.is_file():
                out[f"{key}:{given}"] = {"path": str(p.resolve()), "sha256": sha256_file(p), "bytes": p.stat().st_size}
            elif p.is_dir():
                files = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith("."))
                h = hashlib.sha256()
                for f in files:
                    h.update(f"{f.relative_to(p)}\0{sha256_file(f)}\n".encode("utf-8"))
                out[f"{key}:{given}"] = {"path": str(p.resolve()), "sha256": h.hexdigest(), "files": len(files)}
    return out


def _previous_runs(path: Path) -> list[dict[str, Any]]:
    """The runs an existing provenance.json records (an older single-run file counts as one run)."""
    if not path.exists():
        return []
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        bad = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
        path.replace(bad)  # kept, never silently dropped
        return [{"note": f"an unreadable provenance.json was moved to {bad.name}"}]
    if isinstance(old.get("runs"), list):
        return old["runs"]
    return [{k: old[k] for k in _RUN_KEYS if k in old}]


_RUN_KEYS = ("command_line", "working_directory", "options", "models", "arms", "inputs", "files", "packages",
             "git_commit", "started", "seconds")


def write_provenance(out: Path, paper: str, options: dict[str, Any], models: list[dict[str, Any]],
                     prompts: dict[str, dict[str, str]], templates: dict[str, str], files: dict[str, Path],
                     arms: list[ArmResult], started: float, extra: dict[str, Any] | None = None) -> Path:
    """Write provenance.json: this run's record at the top level, and every run so far in `runs`.

    A re-run appends its arms, timings, inputs' hashes and versions to the runs of earlier
    invocations instead of replacing them; the file is replaced atomically (temporary file, rename).
    """

    doc = {
        "paper": paper,
        "command_line": (["twinlab"] if Path(sys.argv[0]).name in ("twinlab", "cli.py", "__main__.py")
                         else [Path(sys.argv[0]).name]) + sys.argv[1:],
        "argv": sys.argv,
        "working_directory": str(Path.cwd()),
        "options": options,
        "seeds": {k: v for k, v in options.items() if "seed" in k},
        "models": models,
        "prompts": prompts,
        "templates": {k: {"text": v, "sha256": sha256_text(v)} for k, v in templates.items()},
        "inputs": input_hashes(options),
        "files": {k: {"path": str(p), "sha256": sha256_file(p)} for k, p in files.items()},
        "arms": [{"arm": r.arm.name, **r.arm.labels, "context": r.arm.context, "protocol": r.arm.protocol,
                  "subjects": r.arm.subjects, "sessions": str(r.arm.out), "trials": r.trials_total,
                  "trials_run_now": r.trials_run, "seconds": round(r.seconds, 2),
                  "cpu_seconds": round(r.cpu_seconds, 2)} for r in arms],
        "packages": package_versions(),
        "git_commit": git_commit(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        **(extra or {}),
    }
    path = out / "provenance.json"
    run = {k: doc[k] for k in _RUN_KEYS if k in doc} | {k: v for k, v in (extra or {}).items() if k == "timings"}
    doc["runs"] = _previous_runs(path) + [run]
    atomic_write_text(path, json.dumps(doc, indent=2, default=str))
    return path


# ---------------------------------------------------------------------------------- report
@dataclass
class Report:
    """Tables (CSV) and figures (PNG) of a reproduction, and the report.html that shows them."""

    out: Path
    title: str
    blocks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # tables and figures are rebuilt on every run: drop the previous run's (a figure no longer drawn must go)
        for sub, pattern in (("tables", "*.csv"), ("figures", "*.png")):
            (self.out / sub).mkdir(parents=True, exist_ok=True)
            for old in (self.out / sub).glob(pattern):
                old.unlink()

    def heading(self, text: str, level: int = 2, anchor: str | None = None) -> None:
        a = f" id='{html.escape(anchor)}'" if anchor else ""
        self.blocks.append(f"<h{level}{a}>{html.escape(text)}</h{level}>")

    def text(self, text: str) -> None:
        parts = html.escape(text).split("`")
        self.blocks.append("<p>" + "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)) + "</p>")

    def note(self, text: str) -> None:
        self.blocks.append(f"<p class=note>{html.escape(text)}</p>")

    def table(self, name: str, df: pd.DataFrame, title: str, shown: pd.DataFrame | None = None,
              show: bool = True) -> Path:
        """Write tables/<name>.csv and show `shown` (default: the same frame) in the report (or only link it)."""
        path = self.out / "tables" / f"{name}.csv"

        atomic_write_text(path, spreadsheet_safe_frame(df).to_csv(index=False))  # no cell runs as a formula
        self.files.append(str(path.relative_to(self.out)))
        body = table_html(df if shown is None else shown) if show else ""
        self.blocks.append(f"<h3>{html.escape(title)}</h3><p class=small><a href='tables/{name}.csv'>tables/{name}.csv"
                           f"</a> ({len(df)} rows)</p>{body}")
        return path

    def figure(self, path: Path | None, caption: str) -> None:
        if path is None:
            self.note(f"(no figure: nothing to draw for '{caption[:60]}')")
            return
        rel = str(Path(path).relative_to(self.out))
        self.files.append(rel)
        self.blocks.append(f"<figure><img src='{html.escape(rel)}' alt='{html.escape(rel)}'>"
                           f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def details(self, summary: str, body_html: str) -> None:
        self.blocks.append(f"<details><summary>{html.escape(summary)}</summary>{body_html}</details>")

    def write(self) -> Path:
        page = (f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(self.title)}</title>"
                f"<style>{CSS}</style></head><body><h1>{html.escape(self.title)}</h1>"
                + "\n".join(self.blocks) + "</body></html>")

        return atomic_write_text(self.out / "report.html", page)


def progress_bar(disable: bool = False):
    """The trials' progress on stderr (a bar on a terminal, plain lines in a log)."""

    return bar("trials", eta=True, disable=disable)
