"""An archive within the size limits never costs much more: names, links, duplicates, the member count
and the DECLARED sizes (each, in all, and the inflation ratio) are checked before any member is read, members
are read streaming under a hard cap, and a gzip is inflated under the same caps (stimuli/archives.py; the
limits in docs/guarantees.md, "Archives").

Real archives built here in tmp_path: a zip bomb of a few hundred kB that declares (and inflates to) hundreds of
MB, zips with bad names, a gzip bomb. Memory is measured with tracemalloc: refusing must not allocate what the
bomb declares.
"""
from __future__ import annotations

import gzip
import json
import stat
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from reproductions.hu_levy.archive import ArchiveError, read_json_archive
from stimuli.archives import ArchiveLimitError, ZipLimits, check_zip, gunzip, read_member

GOOD = "results_zh/exp1_word-prediction/news_zh_m_direct.json"
LIMITS = ZipLimits(members=10, member_bytes=10_000_000, total_bytes=20_000_000, ratio=100, ratio_from=1_000_000)


def _zip(path: Path, members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _bomb(path: Path, members: int = 1, mb: int = 200) -> Path:
    """`members` JSON members of `mb` MB each ('[0,0,...]' inflates ~1000 times): a few hundred kB on disk.
    Written in chunks, so building it costs no memory either."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for k in range(members):
            with zf.open(f"results_zh/exp1_word-prediction/m{k}_direct.json", "w", force_zip64=True) as fh:
                fh.write(b"[")
                chunk = b"0," * (1 << 19)
                for _ in range(mb):
                    fh.write(chunk)
                fh.write(b"0]")
    return path


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_zip_bomb_within_every_size_limit_is_refused_before_any_member_is_read(tmp_path):
    """Each member under the member limit, all under the total: what took 2.1 GB. Its inflation ratio
    refuses it from the central directory alone."""
    bomb = _bomb(tmp_path / "bomb.zip", members=5, mb=8)
    assert bomb.stat().st_size < 500_000  # "a 0.47 MB zip"

    def refuse():
        with pytest.raises(ArchiveError, match="inflates .* times; at most 100 are read: a decompression bomb"):
            read_json_archive(bomb)
    peak = _peak(refuse)
    assert peak < 5_000_000, f"refusing the bomb allocated {peak} bytes"


def test_a_member_declaring_more_than_the_limit_is_refused_unread(tmp_path):
    bomb = _bomb(tmp_path / "big.zip", mb=200)

    def refuse():
        with pytest.raises(ArchiveError, match="bytes uncompressed; at most 10000000 are read"):
            read_json_archive(bomb)
    assert _peak(refuse) < 5_000_000


def test_a_member_that_inflates_too_far_is_refused_even_under_the_size_limit(tmp_path):
    z = _zip(tmp_path / "r.zip", {GOOD: b"[" + b"0," * 2_500_000 + b"0]"})  # 5 MB from ~5 kB: ratio ~1000
    with zipfile.ZipFile(z) as zf, pytest.raises(ArchiveLimitError, match="inflates .* times; at most 100"):
        check_zip(zf, LIMITS, "r.zip")
    with pytest.raises(ArchiveError, match="a decompression bomb"):
        read_json_archive(z)


def test_the_total_of_declared_sizes_is_bounded(tmp_path):
    members = {f"results_zh/exp1_word-prediction/m{i}.json": b"[" + b"1," * 400_000 + b"1]" for i in range(3)}
    z = _zip(tmp_path / "t.zip", members, zipfile.ZIP_STORED)
    small = ZipLimits(members=10, member_bytes=1_000_000, total_bytes=2_000_000)
    with zipfile.ZipFile(z) as zf, pytest.raises(ArchiveLimitError, match="more than 2000000 bytes .* together"):
        check_zip(zf, small, "t.zip")
    with zipfile.ZipFile(z) as zf, pytest.raises(ArchiveLimitError, match="3 members; at most 2"):
        check_zip(zf, ZipLimits(members=2, member_bytes=10**7, total_bytes=10**8), "t.zip")


@pytest.mark.parametrize("name, why", [
    ("../evil.json", "not a plain relative path"),
    ("/etc/evil.json", "not a plain relative path"),
    ("results_zh\\evil.json", "not a plain relative path"),
    ("C:/evil.json", "not a plain relative path"),
    ("results_zh/e\u202evil.json", "control or invisible character"),
])
def test_bad_member_names_are_refused_before_any_member_is_read(tmp_path, name, why):
    z = _zip(tmp_path / "n.zip", {GOOD: b"{}", name: b"{}"})
    with pytest.raises(ArchiveError, match=why):
        read_json_archive(z)


def test_links_and_duplicates_are_refused(tmp_path):
    z = tmp_path / "l.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(GOOD, b"{}")
        link = zipfile.ZipInfo("results_zh/exp1_word-prediction/link.json")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, b"/etc/passwd")
    with pytest.raises(ArchiveError, match="link.json'?: a symbolic link"):
        read_json_archive(z)
    d = tmp_path / "d.zip"
    with zipfile.ZipFile(d, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr(GOOD, b"{}")
        zf.writestr(GOOD, b"[]")
    with pytest.raises(ArchiveError, match="appears more than once"):
        read_json_archive(d)
    c = _zip(tmp_path / "c.zip", {GOOD: b"{}", GOOD.upper(): b"{}"})  # one file on a case-insensitive disk
    with pytest.raises(ArchiveError, match="appears more than once"):
        read_json_archive(c)


def test_the_callers_name_rule_refuses_before_any_member_is_read(tmp_path, monkeypatch):
    from reproductions.hu_levy import archive
    from reproductions.hu_levy.outputs_zh import read_outputs

    z = _zip(tmp_path / "o.zip", {GOOD: b"{}", "results_zh/elsewhere/x.json": b"{}"})
    opened = []
    real = archive._read_member
    monkeypatch.setattr(archive, "_read_member", lambda *a: opened.append(a[1].filename) or real(*a))
    with pytest.raises(ArchiveError, match="elsewhere/x.json: not in one of the results folders"):
        read_outputs(z)
    assert opened == []


def test_a_member_read_stops_at_its_declared_size(tmp_path):
    z = _zip(tmp_path / "s.zip", {"a.json": b"x" * 5000})
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("a.json")
        assert read_member(zf, info, 10_000, "s.zip") == b"x" * 5000
        with pytest.raises(ArchiveLimitError, match="more bytes than its declared 5000 \\(or over 1000\\)"):
            read_member(zf, info, 1000, "s.zip")


def test_a_gzip_bomb_is_refused_while_inflating(tmp_path):
    raw = gzip.compress(b"0" * 50_000_000, 9)  # 50 MB from ~50 kB

    def refuse():
        with pytest.raises(ArchiveLimitError, match="a decompression bomb"):
            gunzip(raw, 10**9, "b.gz", ratio=100)
    assert _peak(refuse) < 15_000_000
    text = b"".join(json.dumps({"i": i}).encode() + b"\n" for i in range(1000))
    two = gzip.compress(text[:500]) + gzip.compress(text[500:])  # a multi-member gzip reads whole
    assert gunzip(two, 10**6, "two.gz") == text
    with pytest.raises(ArchiveLimitError, match="cut short"):
        gunzip(gzip.compress(text)[:-20], 10**6, "cut.gz")


def test_a_compressed_table_is_inflated_under_the_caps_by_the_loader(tmp_path, monkeypatch):
    from analysis.load import base as load_base

    f = tmp_path / "t.csv.gz"
    f.write_bytes(gzip.compress(b"a,b\n" + b"1,2\n" * 10))
    assert len(load_base.read_raw_csv(f)) == 10
    monkeypatch.setattr(load_base, "MAX_GZ_BYTES", 35)  # the file is ~30 bytes, its table 44
    with pytest.raises(load_base.LoadError, match="t.csv.gz: inflates to more than 35 bytes"):
        load_base.read_raw_csv(f)
