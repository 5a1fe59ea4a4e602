"""Files twinlab wrote are input too. `twinlab report DIR` re-renders a results folder
from its results.json, which anyone may have edited: every file it names must lie inside the folder
(no `../`, no absolute path, no symlink out, no `javascript:`), and every string is escaped.

Real files: a results folder written by the real analysis (api.report, no R), then edited as an
attacker would; the refusals through the real command (exit 2, one line, no traceback).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis import api
from analysis.report.render import ReportError, render_report
from tests.cli_refusal import refused, twinlab
from tests.support import design_synthetic as ds

SECRET = "TOP-SECRET-CREDENTIAL-7731"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A results folder `analyze` wrote (4 subjects, 8 items, 20 resamples: about 2 s)."""
    root = tmp_path_factory.mktemp("hostile_results")
    ds.agreement_judgments(root / "humans", n_subjects=4, n_items=8)
    api.report(root / "humans", root / "out", n_boot=20, mixed=False)
    return root / "out"


@pytest.fixture
def folder(written, tmp_path) -> Path:
    """A copy of the folder to edit, with a secret beside it (what a `../` path would reach)."""
    out = tmp_path / "results"
    shutil.copytree(written, out)
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "credentials.txt").write_text(f"name,value\nkey,{SECRET}\n", encoding="utf-8")
    return out


def _edit(out: Path, change) -> None:
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    change(res)
    (out / "results.json").write_text(json.dumps(res), encoding="utf-8")


def _shown_table(res: dict) -> str:
    """The name of a table the report shows (its CSV is read and put into the page)."""
    return next(n for s in res["sections"] for n in s["tables"] if res["tables"][n].get("show", True))


@pytest.mark.parametrize("path", ["../secret/credentials.txt", "tables/../../secret/credentials.txt", "ABS"])
def test_a_table_path_outside_the_folder_is_refused_and_never_read(folder, path):
    target = str(folder.parent / "secret" / "credentials.txt") if path == "ABS" else path
    _edit(folder, lambda r: r["tables"][_shown_table(r)].update(file=target))
    before = (folder / "report.html").read_bytes()
    msg = refused("report", str(folder), match=["results.json", "is not a file of the results folder"])
    assert SECRET not in msg
    assert (folder / "report.html").read_bytes() == before  # the old page stays; nothing of the secret written


def test_a_symlink_out_of_the_folder_is_refused(folder):
    res = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    name = _shown_table(res)
    link = folder / res["tables"][name]["file"]
    link.unlink()
    link.symlink_to(folder.parent / "secret" / "credentials.txt")
    with pytest.raises(ReportError, match="leads outside the results folder"):
        render_report(folder)
    # a figure that is a symlink out, too (an <img> would show a file of the reader's disk)
    (folder / "figures" / "leak.png").symlink_to(folder.parent / "secret" / "credentials.txt")
    link.unlink()
    shutil.copy(folder.parent / "secret" / "credentials.txt", link)  # the table is a plain file again
    _edit(folder, lambda r: r["figures"].update(leak={"file": "figures/leak.png", "caption": "x"})
          or r["sections"][0]["figures"].append("leak"))
    with pytest.raises(ReportError, match="figures.leak.*leads outside"):
        render_report(folder)


@pytest.mark.parametrize("link", ["javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>",
                                  "https://evil.example/x.png", "figures/x.png:javascript", "/etc/passwd"])
def test_a_figure_or_linked_table_may_only_name_a_file_of_the_folder(folder, link):
    def fig(r):
        r["figures"]["evil"] = {"file": link, "caption": "c"}
        r["sections"][0]["figures"].append("evil")

    _edit(folder, fig)
    with pytest.raises(ReportError, match="figures.evil.*not a file of the results folder"):
        render_report(folder)
    _edit(folder, lambda r: r["sections"][0]["figures"].remove("evil"))
    hidden = next(n for n, m in json.loads((folder / "results.json").read_text())["tables"].items()
                  if not m.get("show", True))  # a table listed as a CSV link only
    _edit(folder, lambda r: r["tables"][hidden].update(file=link))
    with pytest.raises(ReportError, match="not a file of the results folder"):
        render_report(folder)


def test_every_string_of_results_json_is_escaped(folder):
    xss = "<script>alert(1)</script>"
    attr = "x' onmouseover='alert(2)"

    def poison(r):
        r["runtime_s"] = "<img src=x onerror=alert(3)>"
        r["created"] = xss
        r["title"] = xss
        r["options"]["seed"] = xss
        r["options"]["n_boot"] = xss
        r["notes"].append(xss)
        s = r["sections"][0]
        s["id"], s["title"], s["text"] = attr, xss, xss
        name = _shown_table(r)
        r["tables"][name]["title"] = xss
        r["tables"][name]["rows"] = xss
        for f in r["figures"].values():
            f["caption"] = xss

    _edit(folder, poison)
    page = render_report(folder).read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x" not in page and "onmouseover='" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "id='x&#x27; onmouseover=&#x27;alert(2)'" in page and "href='#x&#x27; onmouseover=" in page
    # the real files are still shown and linked, by relative links inside the folder
    assert "src='figures/interaction_accuracy.png'" in page and "href='tables/" in page


def test_the_analysis_and_the_re_render_give_the_same_page(written, tmp_path):
    """One renderer: `analyze` wrote report.html through it; `report` on the untouched folder gives the
    same bytes but for nothing (the page has no clock of its own)."""
    out = tmp_path / "again"
    shutil.copytree(written, out)
    before = (out / "report.html").read_text(encoding="utf-8")
    r = twinlab("report", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").read_text(encoding="utf-8") == before


def test_a_results_json_not_as_twinlab_writes_it_is_one_message(folder):
    original = (folder / "results.json").read_text(encoding="utf-8")
    for change, where in ((lambda r: r.update(sections="x"), "sections"),
                          (lambda r: r.update(tables=[1]), "tables"),
                          (lambda r: r["sections"].append({"id": 3}), "sections[")):
        (folder / "results.json").write_text(original, encoding="utf-8")
        _edit(folder, change)
        with pytest.raises(ReportError, match=f"results.json: {where}.*not as twinlab writes it".replace("[", r"\[")):
            render_report(folder)
    _edit(folder, lambda r: r.update(sections=[{"id": "a", "title": "b", "items": [{"kind": "formula_fit",
                                                                                  "fit": {"coefficients": 5}}]}]))
    refused("report", str(folder), match=["results.json", "not as twinlab writes it"])
