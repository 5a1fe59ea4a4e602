"""Numpy archives (.npz) read as data, never as code.

numpy stores an object array (a dict of arrays, an array of Python ints) in an .npy member as a pickle,
and unpickling calls whatever the pickle names: `np.load(..., allow_pickle=True)` on a tampered archive
runs its payload. Here every member's header is read by numpy's format reader; a plain array's bytes become
numbers with `np.frombuffer` (what `allow_pickle=False` allows); an object array is read by an unpickler that resolves
exactly the names numpy writes for arrays (its array reconstructor, `ndarray`, `dtype`, `scalar`) to twinlab's own
stand-ins, which only record their arguments. The arrays are then built here from those records: numbers from bytes with
`np.frombuffer` (bool, integer, unsigned, float and complex dtypes only), object arrays from their lists. Any other
name, dtype, shape or size refuses the file, naming it. Nothing supplied by the file is ever called.
"""
from __future__ import annotations

import io
import math
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npformat

from stimuli.archives import ArchiveLimitError, ZipLimits, check_zip

MAX_MEMBER_BYTES = 500_000_000  # one member, uncompressed (the released digit-matrix archive: 1.25 MB)
MAX_TOTAL_BYTES = 500_000_000  # all members together, uncompressed (five 470 MB members are not five small ones)
MAX_MEMBERS = 1000  # members in one archive (the released one has 1)
MAX_RATIO = 200  # a member's declared size over its compressed size, past 1 MB (the released one is stored: 1)
MAX_OBJECTS = 2_000_000  # values built from the object arrays' pickles, all members together
MAX_DEPTH = 64  # nesting of containers in an object array
NUMERIC_KINDS = "biufc"  # bool, int, uint, float, complex: their bytes are only numbers

# (module, name) as numpy 1.x and 2.x write them -> which stand-in answers
_NAMES = {
    ("numpy.core.multiarray", "_reconstruct"): "reconstruct",
    ("numpy._core.multiarray", "_reconstruct"): "reconstruct",
    ("numpy.core.multiarray", "scalar"): "scalar",
    ("numpy._core.multiarray", "scalar"): "scalar",
    ("numpy", "ndarray"): "ndarray",
    ("numpy", "dtype"): "dtype",
}


class NpzError(ValueError):
    """An archive that is not a readable numpy archive, or holds more than data."""


class _Ndarray:
    """Stands for the class `numpy.ndarray` inside a pickle (only ever an argument, never called)."""

    __slots__ = ()


_NDARRAY = _Ndarray()
_IN_PROGRESS = object()


class _Dtype:
    """A dtype as the pickle describes it: its name (`i8`, `O8`) and, after BUILD, its byte order."""

    def __init__(self, name: Any, align: Any = False, copy: Any = False) -> None:
        if not isinstance(name, str) or len(name) > 8 or not name.isascii() or not name.isalnum():
            raise NpzError(f"a dtype {name!r} that is not a plain numeric or object dtype")
        self.name, self.order = name, "|"

    def __setstate__(self, state: Any) -> None:
        # (version, byte order, subarray, names, fields, elsize, alignment, flags): only a plain dtype
        if not (isinstance(state, tuple) and len(state) >= 5 and state[1] in ("<", ">", "|", "=")
                and all(s is None for s in state[2:5])):
            raise NpzError("a structured or sub-array dtype (only plain numeric and object dtypes are read)")
        self.order = state[1]

    def resolve(self) -> np.dtype:
        dt = np.dtype(self.name)
        if dt.kind == "O":
            return dt
        if dt.kind not in NUMERIC_KINDS + "US":
            raise NpzError(f"dtype {self.name!r} (only bool, number, text and object arrays are read)")
        return np.dtype(self.order + dt.str[1:]) if self.order in "<>" else dt


class _Array:
    """An array as the pickle describes it: `_reconstruct(ndarray, (0,), b'b')` then BUILD with its state."""

    def __init__(self, subtype: Any, shape: Any, dtype_char: Any) -> None:
        if subtype is not _NDARRAY:
            raise NpzError("an array of a class other than numpy.ndarray")
        self.state: tuple | None = None

    def __setstate__(self, state: Any) -> None:
        if not (isinstance(state, tuple) and len(state) == 5 and isinstance(state[2], _Dtype)):
            raise NpzError("an array state numpy does not write")
        self.state = state


class _Scalar:
    """A numpy scalar (`scalar(dtype, bytes)`), numeric only."""

    def __init__(self, dtype: Any, data: Any = None) -> None:
        if not isinstance(dtype, _Dtype) or not isinstance(data, bytes):
            raise NpzError("a numpy scalar that is not a number")
        self.dtype, self.data = dtype, data

    def __setstate__(self, state: Any) -> None:
        raise NpzError("a numpy scalar with a state numpy does not write")


class _Unpickler(pickle.Unpickler):
    """Resolves only the names numpy writes for arrays, each to a stand-in; any other name is refused."""

    STAND_INS = {"reconstruct": _Array, "scalar": _Scalar, "dtype": _Dtype}

    def find_class(self, module: str, name: str) -> Any:
        what = _NAMES.get((module, name))
        if what is None:
            raise NpzError(f"its pickle names {module}.{name}, which is code, not data (refused unread)")
        return _NDARRAY if what == "ndarray" else self.STAND_INS[what]

    def persistent_load(self, pid: Any) -> Any:
        raise NpzError("its pickle refers to a persistent object (refused)")


def _shape(value: Any) -> tuple[int, ...]:
    if not (isinstance(value, tuple) and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in value)):
        raise NpzError(f"an array shape {value!r} that is not a tuple of sizes")
    return value


class _Budget:
    """Values built so far (all members of one archive): a small pickle of shared values must not become an
    exponential tree, and the total is bounded (MAX_OBJECTS)."""

    def __init__(self) -> None:
        self.built = 0

    def spend(self, n: int = 1) -> None:
        self.built += n
        if self.built > MAX_OBJECTS:
            raise NpzError(f"its object arrays hold more than {MAX_OBJECTS} values (refused: more than any "
                           "released archive, and a small file that expands this far is a decompression bomb)")


def _build(obj: Any, depth: int, seen: dict[int, Any], budget: _Budget | None = None) -> Any:
    """The plain value of an unpickled record: stand-ins become arrays, containers are rebuilt.

    Every container is built once (memoised by identity, tuples included), so a value shared many times
    in the pickle is shared in the result, never rebuilt at each use."""
    budget = budget or _Budget()
    if depth > MAX_DEPTH:
        raise NpzError(f"containers nested deeper than {MAX_DEPTH}")
    budget.spend()
    if isinstance(obj, (str, bytes, int, float, complex, bool)) or obj is None:
        return obj
    key = id(obj)
    if key in seen:
        if seen[key] is _IN_PROGRESS:
            raise NpzError("an array that contains itself")
        return seen[key]
    if isinstance(obj, dict):
        out: Any = {}
        seen[key] = out
        for k, v in obj.items():
            out[_build(k, depth + 1, seen, budget)] = _build(v, depth + 1, seen, budget)
        return out
    if isinstance(obj, list):
        lst: list = []
        seen[key] = lst
        lst.extend(_build(v, depth + 1, seen, budget) for v in obj)
        return lst
    if isinstance(obj, tuple):
        seen[key] = _IN_PROGRESS
        tup = tuple(_build(v, depth + 1, seen, budget) for v in obj)
        seen[key] = tup
        return tup
    if isinstance(obj, _Scalar):
        dt = obj.dtype.resolve()
        if dt.kind == "O" or len(obj.data) != dt.itemsize:
            raise NpzError("a numpy scalar that is not a number")
        return np.frombuffer(obj.data, dtype=dt)[0]
    if isinstance(obj, _Array):
        if obj.state is None:
            raise NpzError("an array without its data")
        _version, shape, dtype, fortran, data = obj.state
        shape, dt = _shape(shape), dtype.resolve()
        n = math.prod(shape)
        if dt.kind == "O":
            if not isinstance(data, list) or len(data) != n:
                raise NpzError(f"an object array of shape {shape} whose data is not a list of {n} values")
            seen[key] = _IN_PROGRESS
            flat = np.empty(n, dtype=object)
            for i, v in enumerate(data):  # element by element: an element that is an array stays one element
                flat[i] = _build(v, depth + 1, seen, budget)
            arr = flat.reshape(shape)  # numpy pickles an object array's values in C order
            arr = np.asfortranarray(arr) if fortran else arr
            seen[key] = arr
            return arr
        if not isinstance(data, bytes) or len(data) != n * dt.itemsize:
            raise NpzError(f"an array of shape {shape} and dtype {dt.str} whose data is not {n * dt.itemsize} bytes")
        arr = np.frombuffer(data, dtype=dt).reshape(shape, order="F" if fortran else "C").copy(order="K")
        seen[key] = arr
        return arr
    if isinstance(obj, (_Dtype, _Ndarray)):
        raise NpzError("a bare dtype or class where a value belongs")
    raise NpzError(f"a value of type {type(obj).__name__} (refused)")


def _read_member(stream: io.BufferedIOBase, budget: _Budget) -> np.ndarray:
    version = npformat.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = npformat.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, fortran, dtype = npformat.read_array_header_2_0(stream)
    else:
        raise NpzError(f".npy format version {version} (1.0 and 2.0 are read)")
    if not dtype.hasobject:
        if dtype.kind not in NUMERIC_KINDS + "US":
            raise NpzError(f"dtype {dtype.str} (numbers, text and object arrays are read)")
        count = math.prod(shape)
        data = stream.read(count * dtype.itemsize)
        if len(data) != count * dtype.itemsize:
            raise NpzError(f"an array of shape {shape} cut short ({len(data)} of {count * dtype.itemsize} bytes)")
        return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy(order="K")
    if dtype != np.dtype(object):
        raise NpzError(f"a structured dtype holding objects ({dtype})")
    record = _Unpickler(stream).load()
    arr = _build(record, 0, {}, budget)
    if not isinstance(arr, np.ndarray) or arr.shape != tuple(shape):
        raise NpzError(f"its pickle is not the array of shape {shape} its header announces")
    return arr


def _check_totals(zf: zipfile.ZipFile, where: str) -> list[zipfile.ZipInfo]:
    """The .npy members, after every check of stimuli/archives.py on every member (names, links, duplicates,
    the count, each declared size, the total and the inflation ratio), before any member is read; zipfile
    then reads no more than a member declares."""

    limits = ZipLimits(members=MAX_MEMBERS, member_bytes=MAX_MEMBER_BYTES, total_bytes=MAX_TOTAL_BYTES, ratio=MAX_RATIO)
    try:
        return check_zip(zf, limits, where, wanted=lambda i: i.filename.endswith(".npy"))
    except ArchiveLimitError as exc:
        raise NpzError(str(exc).removeprefix(f"{where}: ")) from None


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Every member of a .npz archive as an array (object arrays as described above); NpzError naming why."""
    p = Path(path)
    try:
        with zipfile.ZipFile(p) as zf:
            out: dict[str, np.ndarray] = {}
            members = _check_totals(zf, str(p))
            budget = _Budget()
            for info in members:
                with zf.open(info) as raw:
                    try:
                        out[info.filename.removesuffix(".npy")] = _read_member(raw, budget)
                    except NpzError as exc:
                        raise NpzError(f"member {info.filename}: {exc}") from None
            return out
    except NpzError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, pickle.UnpicklingError, MemoryError, RecursionError, OverflowError) as exc:
        raise NpzError(f"not a readable numpy archive ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
