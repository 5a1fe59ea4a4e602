"""The documentation as a site and as the target of every citation.

The site: `mkdocs build --strict` (mkdocs.yml; a broken link, a missing page or anchor, a page left out of
the navigation fails it) into a temporary folder, with the offline search index written. The pages: none over
40,000 characters, and no project history ("issue N") in them. The citations: every `docs/<page>.md`
that code, a report or another page names exists, and so does the section it names (`"Section"` or
`#anchor`), so a message never sends a reader to a page or section that is not there. The README: under
8,000 characters, and its two commands are the Makefile's.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGE_LIMIT = 40_000
README_LIMIT = 8_000
# where citations live: the packages (messages, reports, docstrings), the scripts, the docs, the README
CITING = ("analysis", "experiments", "participants", "model_subjects", "reproductions", "kinds", "studies",
          "stimuli", "scripts", "benchmarks", "docs")
SKIP_PARTS = {"node_modules", "__pycache__"}
CITATION = re.compile(r"docs/([a-z0-9_/-]+\.md)"  # the page
                      r"""(#[a-z0-9_-]+|(?:[,:]?\s*\(?)(?P<q>["'])(?P<title>[^"'\n]{2,80})(?P=q))?""")  # its section


def heading_slug(title: str) -> str:
    """The anchor mkdocs' toc gives a heading (Python-Markdown's slugify on the heading's text)."""
    import unicodedata

    plain = re.sub(r"`([^`]*)`", r"\1", title)
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
    plain = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", plain)
    plain = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode("ascii")
    plain = re.sub(r"[^\w\s-]", "", plain).strip().lower()
    return re.sub(r"[-\s]+", "-", plain)


def headings(page: Path) -> list[str]:
    """The page's headings (outside code fences), as written."""
    out, fence = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            out.append(re.sub(r"^#+\s*", "", line).strip())
    return out


def plain(text: str) -> str:
    return re.sub(r"[`*]", "", text).strip().lower()


def citing_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for top in CITING:
        for p in (ROOT / top).rglob("*"):
            if p.is_file() and p.suffix in (".py", ".js", ".md", ".R", ".yaml", ".sh", ".html") \
                    and not SKIP_PARTS & set(p.parts):
                files.append(p)
    return [p for p in files if p.is_file()]


def citations() -> list[tuple[str, str, str | None, str | None]]:
    """(file, page, anchor, section title) of every docs citation in the project."""
    found = []
    for path in citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(text):
            anchor = m.group(2)[1:] if m.group(2) and m.group(2).startswith("#") else None
            found.append((str(path.relative_to(ROOT)), m.group(1), anchor, m.group("title")))
    return found


def test_every_cited_docs_page_and_section_exists():
    found = citations()
    assert len(found) > 50, "the citation scan found almost nothing: its pattern is broken"
    missing = []
    for where, page, anchor, title in found:
        target = DOCS / page
        if not target.is_file():
            missing.append(f"{where}: docs/{page} (no such page)")
            continue
        heads = headings(target)
        if anchor and anchor not in {heading_slug(h) for h in heads}:
            missing.append(f"{where}: docs/{page}#{anchor} (no such heading)")
        if title and not any(plain(h).startswith(plain(title)) for h in heads):
            missing.append(f'{where}: docs/{page} "{title}" (no heading starts so)')
    assert not missing, "\n".join(missing)


def test_the_citation_check_sees_a_missing_section(tmp_path):
    """The check itself: a made-up section of a real page is not among its headings."""
    heads = headings(DOCS / "analysis.md")
    assert heads and not any(plain(h).startswith(plain("Honest subjects")) for h in heads)
    assert heading_slug("Backends (`--backend`)") == "backends-backend"


def test_no_docs_page_is_over_the_limit_and_none_tells_history():
    pages = sorted(DOCS.rglob("*.md"))
    assert len(pages) > 20
    big = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8")) for p in pages}
    assert not {p: n for p, n in big.items() if n > PAGE_LIMIT}
    history = [f"{p.relative_to(ROOT)}:{k}" for p in pages
               for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if re.search(r"\b[Ii]ssues? \d+", line)]
    assert not history, history


def test_readme_fits_a_screen_and_names_the_makefile_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) < README_LIMIT, len(text)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target, script in (("demo", "scripts/demo.sh"), ("test", "scripts/test.sh")):
        assert f"make {target}" in text
        assert re.search(rf"^{target}:.*\n\tbash {re.escape(script)}", makefile, re.M), target
    assert "bash .ci/run" not in text or "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_site_builds_in_strict_mode_with_its_search_index(tmp_path):
    res = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "tutorial" / "first-study" / "index.html").is_file()
    index = (tmp_path / "site" / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "Your first study" in index and "Latin square" in index


def test_strict_mode_fails_on_a_broken_link(tmp_path):
    """What the build above would say if a page linked to a page that is not there."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the spec](spec.md#tasks).\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:")[0] + "\nnav:\n  - index.md\n",
                      encoding="utf-8")
    res = mkdocs_build(config, tmp_path / "site")
    assert res.returncode != 0 and "spec.md" in res.stdout + res.stderr
