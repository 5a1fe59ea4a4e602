"""Input is data, never code (docs/guarantees.md): every place that could run code from a file or a setting.

Each test plants a payload that would create a marker file if it ran, then checks the refusal (one message
naming the file, exit 2 from the CLI, no traceback) and that the marker was never created:
- the Hu & Frank digit-matrix archive (`.npz`, whose object arrays numpy stores as pickles);
- damaged `.gz` files (a `zlib.error` or `EOFError` traceback before);
- YAML specs and sweeps (`!!python/...` tags);
- the backend and importer registries (a name is looked up, never imported as given);
- Slurm parameters that submitit writes as shell lines into the job script;
- model weights (`pytorch_model.bin` is a pickle: read with `weights_only=True`).
"""
from __future__ import annotations

import gzip
import io
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from reproductions.common import ReproError
from reproductions.hu_frank import released
from reproductions.hu_frank import stimuli as st
from reproductions.npz import NpzError, read_npz
from tests.support.hu_frank_release import write_release, write_stimuli

ROOT = Path(__file__).resolve().parents[2]
REAL = next((p / "shared" / "data" / "hu_frank2024" for p in (ROOT.parent, ROOT.parents[1])
             if (p / "shared" / "data" / "hu_frank2024").is_dir()), None)


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)


class _Payload:
    """Unpickling this calls `func(*args)`: what a tampered archive does."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _npy_with_pickle(payload: bytes) -> bytes:
    """An .npy member holding an object array: numpy's header, then the pickle."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|O", "fortran_order": False, "shape": ()})
    return buf.getvalue() + payload


def _write_npz(path: Path, members: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _release_with_archive(tmp_path: Path, npz_bytes_or_members) -> Path:
    rel = write_stimuli(write_release(tmp_path / "rel"))
    archive = rel / "external_stimuli" / "digit_mat" / "all_problems.npz"
    archive.unlink()
    if isinstance(npz_bytes_or_members, bytes):
        archive.write_bytes(npz_bytes_or_members)
    else:
        _write_npz(archive, npz_bytes_or_members)
    return rel


def _evil_pickles(marker: Path) -> dict[str, bytes]:
    """Pickles that create `marker` when numpy's own unpickler (allow_pickle=True) reads them."""
    code = f"open({str(marker)!r}, 'w').close()"
    return {
        "builtins.open": pickle.dumps(np.array({"row_constant": _Payload(open, str(marker), "w")}, dtype=object), 3),
        "builtins.exec": pickle.dumps(np.array(_Payload(exec, code), dtype=object), 3),
        "os.system": pickle.dumps(np.array([_Payload(os.system, f"touch {marker}")], dtype=object), 3),
        "subprocess.Popen": pickle.dumps(_Payload(subprocess.Popen, ["touch", str(marker)]), 3),
        # a name numpy itself defines: allowing "anything from numpy" would run this
        "numpy.testing runstring": b"\x80\x03cnumpy.testing._private.utils\nrunstring\nq\x00X" +
        len(code).to_bytes(4, "little") + code.encode() + b"}\x86R.",
    }


@pytest.mark.parametrize("how", list(_evil_pickles(Path("/x"))))
def test_a_tampered_digit_matrix_archive_runs_nothing(tmp_path, how):
    marker = tmp_path / "MARKER"
    payload = _evil_pickles(marker)[how]
    path = _write_npz(tmp_path / "all_problems.npz", {"all_problems.npy": _npy_with_pickle(payload)})
    with pytest.raises(ReproError) as exc:
        st.digit_matrices(path)
    assert str(path) in str(exc.value) and "code, not data" in str(exc.value)
    assert not marker.exists()
    if how == "builtins.open":  # the reference: numpy's unpickler does run it (so the test can fail)
        np.load(path, allow_pickle=True)["all_problems"]
        assert marker.exists()


def test_a_tampered_archive_through_the_cli_is_refused_before_anything_is_written(tmp_path):
    marker = tmp_path / "MARKER"
    rel = _release_with_archive(tmp_path, {"all_problems.npy": _npy_with_pickle(_evil_pickles(marker)["os.system"])})
    out = tmp_path / "out"
    r = _cli("reproduce", "hu-frank2024", "--data", str(rel), "--out", str(out), "--items", "1")
    assert r.returncode == 2, r.stderr
    assert "all_problems.npz" in r.stderr and "posix.system, which is code, not data" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout and not marker.exists() and not out.exists()


def _pickle_of(*ops: bytes) -> bytes:
    return b"\x80\x03" + b"".join(ops) + b"."


@pytest.mark.parametrize("payload, says", [
    # numpy's reconstructor with another class than ndarray (the only class it may build)
    (_pickle_of(b"cnumpy.core.multiarray\n_reconstruct\n", b"cnumpy\ndtype\n", b"K\x00\x85C\x01b\x87R"),
     "class other than numpy.ndarray"),
    # `ndarray` called directly (a buffer of the attacker's choosing): ndarray is only ever an argument
    (_pickle_of(b"cnumpy\nndarray\n", b"K\x05\x85\x85R"), "not callable"),
    # a dtype whose name is not a plain dtype name
    (_pickle_of(b"cnumpy\ndtype\n", b"X\x03\x00\x00\x00<i8\x89\x88\x87R"), "not a plain numeric or object dtype"),
])
def test_the_names_numpy_writes_are_stand_ins_that_call_nothing(tmp_path, payload, says):
    path = _write_npz(tmp_path / "a.npz", {"x.npy": _npy_with_pickle(payload)})
    with pytest.raises(NpzError) as exc:
        read_npz(path)
    assert says in str(exc.value)


@pytest.mark.parametrize("damage, says", [
    ("not a zip", "not a readable numpy archive"), ("truncated", "not a readable numpy archive"),
    ("cut pickle", "not a readable numpy archive"), ("no all_problems", "members: other"),
    ("plain array", "not the digit-matrix archive")])
def test_a_damaged_archive_is_one_message_naming_the_file(tmp_path, damage, says):
    good = tmp_path / "good.npz"
    np.savez(good, all_problems=np.array({"t": {"prob": np.zeros((1, 3, 3, 1))}}, dtype=object))
    data = good.read_bytes()
    path = tmp_path / "all_problems.npz"
    content = {
        "not a zip": b"this is not an archive at all",
        "truncated": data[: len(data) // 2],
        "cut pickle": {"all_problems.npy": _npy_with_pickle(pickle.dumps(np.array({"a": 1}, dtype=object), 3)[:-5])},
        "no all_problems": {"other.npy": _npy_with_pickle(pickle.dumps(np.array(1, dtype=object), 3))},
        "plain array": {"all_problems.npy": _plain_npy()},
    }[damage]
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        _write_npz(path, content)
    with pytest.raises(ReproError) as exc:
        st.digit_matrices(path)
    assert str(exc.value).startswith(f"{path}: ") and says in str(exc.value) and "\n" not in str(exc.value)


def test_a_damaged_archive_through_the_cli_is_one_line_exit_2(tmp_path):
    rel = _release_with_archive(tmp_path, b"PK\x03\x04 damaged")
    r = _cli("reproduce", "hu-frank2024", "--data", str(rel), "--out", str(tmp_path / "out"), "--items", "1")
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert "all_problems.npz: not a readable numpy archive" in r.stderr and not (tmp_path / "out").exists()


def _plain_npy() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.arange(3))
    return buf.getvalue()


def test_the_fixture_archive_reads_as_before(tmp_path):
    """numpy 2's own pickles (`numpy._core.multiarray`) read through the stand-ins; the items are those of
    tests/reproductions/test_hu_frank_domains.py's hand check."""
    ext = write_stimuli(tmp_path) / "external_stimuli"
    items = st.digit_matrices(ext / "digit_mat" / "all_problems.npz")
    assert [i.item for i in items][:2] == ["row_constant_0", "c2_set_union_0"]
    assert items[1].prompt == "[1 2] [3  ] [1 3]\n[4 5] [6  ] [4 6]\n[7 8] [9  ] ["
    assert items[3].extra["correct_answer"] == [7, 9]


def test_numbers_text_fortran_order_and_byte_order_survive(tmp_path):
    value = {"f": np.asfortranarray(np.arange(12.0).reshape(3, 4)), "big": np.arange(5, dtype=">i4"),
             "u": np.array(["ab", "c"]), "b": np.array([True, False]), "s": np.int64(7),
             "o": np.array([np.arange(3), np.arange(2)], dtype=object), "t": (1, [2, {"a": 3.5}])}
    path = tmp_path / "v.npz"
    np.savez(path, v=np.array(value, dtype=object), plain=np.asfortranarray(np.arange(6).reshape(2, 3)))
    got = read_npz(path)
    assert got["plain"].flags.f_contiguous and got["plain"].tolist() == [[0, 1, 2], [3, 4, 5]]
    v = got["v"].item()
    assert v["f"].flags.f_contiguous and v["f"].tolist() == np.arange(12.0).reshape(3, 4).tolist()
    assert v["big"].tolist() == [0, 1, 2, 3, 4] and v["u"].tolist() == ["ab", "c"] and v["b"].tolist() == [True, False]
    assert v["s"] == 7 and isinstance(v["s"], np.int64)
    assert [a.tolist() for a in v["o"]] == [[0, 1, 2], [0, 1]] and v["t"] == (1, [2, {"a": 3.5}])


@pytest.mark.skipif(REAL is None, reason="the real Hu & Frank release is not in ../shared/data")
def test_the_real_release_reads_exactly_as_numpy_reads_it():
    """Reference: numpy's own unpickler on the genuine, read-only release file (trusted here, and only here)."""
    path = REAL / "external_stimuli" / "digit_mat" / "all_problems.npz"
    ours = read_npz(path)["all_problems"].item()
    ref = np.load(path, allow_pickle=True)["all_problems"].item()
    assert len(ref) == 32 and _same(ours, ref)
    assert len(st.digit_matrices(path)) == 1216  # the first 40 of each type (some types have fewer)


def _same(a, b) -> bool:
    """Equal values of equal types, arrays with equal dtype, shape and memory order, recursively."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        if (a.dtype, a.shape, a.flags.f_contiguous) != (b.dtype, b.shape, b.flags.f_contiguous):
            return False
        return all(map(_same, a.ravel(), b.ravel())) if a.dtype == object else bool(np.array_equal(a, b))
    return bool(a == b)


# ---- damaged .gz files ----------------------------------------------------------------------------
def _damaged_gz(text: str, how: str) -> bytes:
    data = gzip.compress(text.encode() * 50)
    if how == "truncated":
        return data[: len(data) // 2]  # EOFError inside pandas / gzip before
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 8]) + data[mid + 8:]  # zlib.error before


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_released_output_gz_is_one_message(tmp_path, how):
    rel = write_release(tmp_path / "rel")
    target = next((rel / "output" / "digit_mat").glob("*.csv.gz"))
    head = "problem_id,generated_response_correct,mc_response_correct,model\n"
    target.write_bytes(_damaged_gz(head + "".join(f"{i},True,False,m\n" for i in range(200)), how))
    with pytest.raises(ReproError) as exc:
        released._read(target, released.REQUIRED["digit_mat"])
    assert str(target) in str(exc.value)
    r = _cli("reproduce", "hu-frank2024", "--authors-outputs", str(rel), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and target.name in r.stderr and "Traceback" not in r.stderr + r.stdout, r.stderr


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_damaged_stimulus_gz_files_are_one_message(tmp_path, how):
    bad = tmp_path / "p.jsonl.gz"
    bad.write_bytes(_damaged_gz('{"sentence_good": "a b.", "sentence_bad": "b a."}\n', how))
    with pytest.raises(ReproError, match=str(bad)):
        st.blimp_jsonl(bad)
    lam = tmp_path / "lambada.csv.gz"
    lam.write_bytes(_damaged_gz("item_id,prefix,final_word\n1,a b,c\n", how))
    with pytest.raises(ReproError, match=str(lam)):
        st.lambada(lam)
    crt = tmp_path / "stimuli.csv.gz"
    crt.write_bytes(_damaged_gz("condition,item_id,question,correct,intuitive\ncrt2,1,Q?,a,b\n", how))
    with pytest.raises(ReproError, match=str(crt)):
        st.crt(crt)


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_analyze_a_damaged_gz_table_is_one_message(tmp_path, how):
    bad = tmp_path / "study_data.csv.gz"
    bad.write_bytes(_damaged_gz("subject_id,trial_index,response\nS1,0,a\n", how))
    r = _cli("analyze", str(bad), "--out", str(tmp_path / "rep"))
    assert r.returncode == 2 and str(bad) in r.stderr and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert not (tmp_path / "rep").exists()


# ---- YAML, registries, Slurm parameters, model weights ----------------------------------------------
YAML_TAGS = ["!!python/object/apply:builtins.open [{m}, w]", "!!python/object/apply:os.system ['touch {m}']",
             "!!python/object/new:subprocess.Popen [[touch, {m}]]", "!!python/name:os.system"]


@pytest.mark.parametrize("tag", YAML_TAGS)
def test_yaml_tags_in_a_spec_or_a_sweep_run_nothing(tmp_path, tag):
    from experiments.spec import SpecError, load_spec
    from model_subjects.sweep import SweepError, load_sweep

    marker = tmp_path / "MARKER"
    value = tag.format(m=marker)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: {value}\nblocks: [{{name: b, structures: [long_nested]}}]\n", encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        load_spec(spec)
    assert str(spec) in str(exc.value)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"spec: lakretz2021_nested\nmodels: [{{model: {value}}}]\nout: o\n", encoding="utf-8")
    with pytest.raises(SweepError) as exc:
        load_sweep(sweep)
    assert str(sweep) in str(exc.value)
    assert not marker.exists()


def test_a_backend_name_is_looked_up_never_imported_as_given():
    """registry.get_backend_class imports modules, but only those of its fixed table; any other name is
    refused unread (`antigravity` would open a web browser when imported)."""
    from model_subjects.backends.base import ModelLoadError
    from model_subjects.backends.registry import BACKEND_MODULES, get_backend_class

    for name in ("antigravity", "os", "model_subjects.backends.hf", "subprocess"):
        with pytest.raises(ModelLoadError, match="unknown backend"):
            get_backend_class(name)
    assert "antigravity" not in sys.modules
    assert all(m.startswith("model_subjects.") for m in BACKEND_MODULES.values())


@pytest.mark.parametrize("slurm, says", [
    ({"slurm_setup": ["touch MARKER"]}, "shell commands"),
    ({"slurm_teardown": ["touch MARKER"]}, "shell commands"),
    ({"slurm_srun_args": ["--prolog=/tmp/x.sh"]}, "shell commands"),
    ({"slurm_partition": "gpu\ntouch MARKER"}, "one line of printable text"),
    ({"slurm_additional_parameters": {"x\ntouch MARKER": 1}}, "sbatch option name"),
    ({"slurm_additional_parameters": {"begin": "now\ntouch MARKER"}}, "one line of printable text"),
    ({"slurm_comment": ["a", "b"]}, "one line of printable text"),
])
def test_slurm_parameters_that_would_be_shell_lines_are_refused(slurm, says):
    from experiments.options import OptionError
    from model_subjects.sweep import check_executor

    pytest.importorskip("submitit")
    with pytest.raises(OptionError, match=says):
        check_executor("submitit-local", slurm)
    check_executor("submitit-local", {"slurm_partition": "gpu", "slurm_additional_parameters": {"begin": "now"},
                                      "timeout_min": 60})  # plain values pass


@pytest.mark.slow
def test_a_pickled_weights_file_runs_nothing(tmp_path):
    """A model folder whose pytorch_model.bin is a pickle that opens a file: loading reads tensors only
    (weights_only), so the model is refused and the file never created; torch's plain load would run it."""
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import GPT2Config, PreTrainedTokenizerFast

    from model_subjects.backends.base import ModelLoadError
    from model_subjects.backends.registry import load_backend

    folder = tmp_path / "evil_model"
    folder.mkdir()
    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=4, n_positions=16).save_pretrained(folder)
    tok = Tokenizer(WordLevel({"[UNK]": 0, "a": 1, "b": 2, "c": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(folder)
    marker = tmp_path / "MARKER"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"w": _Payload(open, str(marker), "w")}, 2))
    with pytest.raises(ModelLoadError) as exc:
        load_backend(str(folder), backend="transformers", device="cpu")
    assert str(folder) in str(exc.value)
    assert not marker.exists()
    # the reference: an unrestricted load runs the payload (then fails in a torch-version-dependent way)
    with pytest.raises(Exception):  # noqa: B017 - only the payload's side effect matters, not the error type
        torch.load(folder / "pytorch_model.bin", weights_only=False)
    assert marker.exists()


def test_an_importer_name_is_a_registered_command_never_a_module():
    """`twinlab import NAME` offers the importer registry's fixed commands; any other name is a usage error."""
    from typer.testing import CliRunner

    from experiments.cli import app
    from participants.imports.registry import importers

    r = CliRunner().invoke(app, ["import", "antigravity"])
    assert r.exit_code == 2 and "antigravity" not in sys.modules
    assert all(imp.module.split(".")[0] in ("analysis", "participants", "studies") for imp in importers().values())
