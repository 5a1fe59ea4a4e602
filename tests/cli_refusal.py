"""Run the real `twinlab` command in a subprocess and check a refusal: exit 2, one line, no traceback.

Shared by the tests of the refusals (bad input, nothing overwritten, nothing substituted).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def twinlab(*args: str, cwd: Path | None = None, timeout: float = 60, env: dict | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "COLUMNS": "400"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", "from experiments.cli import app; app()", *args],
                          cwd=cwd or ROOT, env=full_env, capture_output=True, text=True, timeout=timeout,
                          input=input)


def refused(*args: str, match: str | list[str], cwd: Path | None = None, timeout: float = 60,
            env: dict | None = None) -> str:
    """The error message of a refused command: exit 2, no traceback, one `error:` line (a file
    with several bad rows lists them on indented lines below it); returned as one line."""
    r = twinlab(*args, cwd=cwd, timeout=timeout, env=env)
    both = r.stdout + r.stderr
    assert "Traceback" not in both, both
    assert r.returncode == 2, f"exit {r.returncode} for {args}:\n{both}"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    errors = [k for k, ln in enumerate(lines) if ln.startswith("error:")]
    assert len(errors) == 1, f"not one error:\n{r.stderr}"
    rest = lines[errors[0] + 1:]
    assert all(ln[:1].isspace() for ln in rest), f"the error is not the last thing said:\n{r.stderr}"
    message = " ".join(ln.strip() for ln in lines[errors[0]:])
    for m in [match] if isinstance(match, str) else match:
        assert m in message, message
    return message


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (to show that a refused command wrote nothing)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
