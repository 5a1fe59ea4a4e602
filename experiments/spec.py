"""The experiment specification: a YAML file validated with pydantic (the schema: experiments/spec_model.py).

Every error names the file, the field and the offending value, never a traceback (see
`SpecError`). The validated spec is hashed from its canonical JSON, so a trivial reformatting of
the YAML does not change the hash but any change of content does. This module reads a spec and runs
the checks that need its files (the design file through experiments.sources.design_rows.check_design);
the models live in experiments.spec_model (callers import them from there).
"""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from experiments.spec_errors import describe
from experiments.spec_model import Experiment, SpecError
from experiments.spec_texts import checked_texts
from stimuli.files import StimulusFileError, load_items
from stimuli.textfile import read_text_file


def _format_errors(exc: ValidationError, where: str, raw: Any) -> str:
    """Every problem on its own line, by its full path with the accepted form (experiments/spec_errors.py)."""
    lines: list[str] = []
    for err in exc.errors():
        loc = _format_loc(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "string_type" and isinstance(err.get("input"), bool):
            msg += ("; YAML reads an unquoted yes/no/on/off/true/false as a truth value: put the text in quotes, "
                    "e.g. \"YES\"")
        if msg.startswith(f"{loc}."):  # a kind's settings under `task:`, each already named by its full path
            lines += [f"  - {m}" for m in re.split(rf"; (?={re.escape(loc)}\.)", msg)]
            continue
        if loc.endswith(" (a key)"):
            value = err.get("input")
            shown = "" if err["type"] in ("missing",) or isinstance(value, dict) else f" (value: {value!r})"
            lines.append(f"  - {loc}: {msg}{shown}")
            continue
        parts = [] if loc == "(top level)" else loc.split(".")
        lines.append("  - " + describe(parts, err["type"], msg, err.get("input"), "input" in err))
    return "\n".join([f"{where}: invalid experiment spec ({len(lines)} problem(s))", *lines])


def _format_loc(loc: tuple[Any, ...]) -> str:
    """A field path as the spec writes it: `task.panel.labels`, `blocks.0.trials`. Pydantic's own markers are
    not fields: a mapping's key (`[key]`, said in words) and a union's branch (`literal['all']`,
    `list[constrained-int]`, `function-after[...]`) are left out, so a path never ends in a dot or a type."""
    parts: list[str] = []
    key, last = None, None
    for p in loc:
        text = str(p)
        if text == "[key]":
            key = last
        elif isinstance(p, str) and _BRANCH.match(text):
            continue
        else:
            parts.append(text)
            last = p
    out = ".".join(parts) or "(top level)"
    return f"{out} (a key)" if key is not None else out


_BRANCH = re.compile(r"^[a-z][a-z0-9_-]*\[.*\]$|^(int|str|float|bool|none|dict|list)$")


def parse_spec(data: Any, where: str = "<spec>", base_dir: Path | None = None) -> Experiment:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: the spec must be a YAML mapping at the top level, got {type(data).__name__}")

    try:  # every text NFC; hidden characters, look-alikes and over-long texts refused naming the field
        data = checked_texts(data, where, SpecError)
    except RecursionError:
        raise SpecError(f"{where}: nested too deeply to be an experiment spec") from None
    try:
        exp = Experiment.model_validate({**data, "source_path": where})
    except ValidationError as exc:
        raise SpecError(_format_errors(exc, where, data)) from None
    if exp.stimuli.file is not None:
        f = Path(exp.stimuli.file)
        if not f.is_absolute() and base_dir is not None:
            f = base_dir / f
        if not f.exists():
            raise SpecError(f"{where}: stimuli.file: stimulus file {str(f)!r} does not exist")
        exp = exp.model_copy(update={"stimuli": exp.stimuli.model_copy(update={"file": str(f)})})
    if exp.design is not None:
        f = Path(exp.design.file)
        if not f.is_absolute() and base_dir is not None:
            f = base_dir / f
        if not f.exists():
            raise SpecError(f"{where}: design.file: stimulus file {str(f)!r} does not exist")
        exp = exp.model_copy(update={"design": exp.design.model_copy(update={"file": str(f)})})
        from experiments.sources.design_rows import check_design  # late: loads numpy, which `twinlab --help` lacks

        check_design(exp, where)
        return exp
    _check_structures(exp, where)
    return exp


def _check_structures(exp: Experiment, where: str) -> None:
    """Block structures exist in the stimulus source (the generator's, or the file's)."""
    if exp.stimuli.file is None:
        from experiments.studies import stimuli_part  # the study that supplies `stimuli:` items

        known = set(stimuli_part("structures"))
        lexicons = set(stimuli_part("lexicons"))
        source = "the generator"
    else:
        try:
            items = load_items(exp.stimuli.file, language=exp.language)
        except StimulusFileError as exc:
            raise SpecError(f"{where}: stimuli.file: {exc}") from None
        known = {i.structure for i in items}
        lexicons = {i.lexicon for i in items}
        source = f"stimulus file {exp.stimuli.file}"
    for k, b in enumerate(exp.blocks):
        if b.lexicon not in lexicons:
            raise SpecError(f"{where}: blocks.{k}.lexicon: unknown lexicon {b.lexicon!r} in {source}; "
                            f"known: {', '.join(sorted(lexicons))}")
        field = "design" if b.design is not None else "structures"
        for j, s in enumerate(b.structure_names()):
            if s not in known:
                loc = f"blocks.{k}.design.{j}.structure" if field == "design" else f"blocks.{k}.structures"
                raise SpecError(f"{where}: {loc}: unknown structure {s!r} in {source}; known: "
                                f"{', '.join(sorted(known))}")


BUNDLED_SPECS = Path(__file__).parent / "specs"


def resolve_spec_path(spec: str | Path) -> Path:
    """The file a spec argument names, by one rule and without fallbacks.

    A *bare name* (no folder separator, no .yaml/.yml suffix, such as `lakretz2021_nested`) names
    a bundled spec; anything else is a path, which must exist. A path that does not exist is an
    error, never a bundled spec of the same name. A bare name that is also a file here is refused
    as ambiguous (write `./name` for the file).
    """
    text = str(spec)
    bare = ("/" not in text and "\\" not in text and not text.lower().endswith((".yaml", ".yml"))
            and text not in ("", ".", ".."))
    if not bare:
        path = Path(text).expanduser()
        if not path.exists():
            raise SpecError(f"spec file {text!r} does not exist")
        return path
    bundled = BUNDLED_SPECS / f"{text}.yaml"
    local = Path(text)
    if bundled.is_file():
        if local.exists():
            raise SpecError(f"spec {text!r} is both a bundled spec and a file in the current folder; "
                            f"write ./{text} for the file")
        return bundled
    if local.exists():
        return local
    known = ", ".join(sorted(p.stem for p in BUNDLED_SPECS.glob("*.yaml")))
    raise SpecError(f"spec {text!r}: no such file and no bundled spec of that name (bundled: {known}); "
                    "a spec file is given by a path such as ./my_spec.yaml")


def load_spec(path: str | Path) -> Experiment:
    """Read and validate a spec file (or a bundled spec by bare name); raises SpecError with a readable message."""
    path = resolve_spec_path(path)
    data = yaml_load(read_text_file(path, SpecError, "spec"), path, SpecError)
    return parse_spec(data, where=str(path), base_dir=path.parent)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (plain YAML keeps the last silently)."""


_MERGE_TAG = "tag:yaml.org,2002:merge"
# a spec or sweep has hundreds of nodes; an alias bomb ("billion laughs") expands to billions
MAX_YAML_NODES = 100_000


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue  # `<<: *anchor` (standard YAML merge): its keys may be overridden here
        try:
            key = loader.construct_object(key_node, deep=True)
            hash(key)
        except TypeError:
            continue  # an unhashable key: let the normal constructor report it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice in one mapping (first on line {seen[key]}); "
                "the second would silently replace the first", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


class _TooLarge(Exception):
    pass


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes the document has with every alias expanded (linear time: sizes are memoised
    per node, so an alias bomb is measured, not expanded); _TooLarge past `limit`."""
    size: dict[int, int] = {}
    active: set[int] = set()

    def walk(node: yaml.Node) -> int:
        key = id(node)
        if key in size:
            return size[key]
        if key in active:
            raise _TooLarge(f"an alias refers to itself (line {node.start_mark.line + 1})")
        active.add(key)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            n += sum(walk(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            n += sum(walk(k) + walk(v) for k, v in node.value)
        active.discard(key)
        if n > limit:
            raise _TooLarge(f"more than {limit} YAML nodes once its aliases are expanded (an alias bomb?)")
        size[key] = n
        return n

    return walk(root)


def yaml_load(text: str, path: Path | str, error: type[Exception]) -> Any:
    """YAML with unique keys, merge keys (`<<:`) and a bound on the document's size with aliases
    expanded; any problem is `error` naming the file and line."""
    stream = io.StringIO(text)
    stream.name = str(path)  # type: ignore[misc]  # YAML's messages name the file, not "<unicode string>"
    try:  # the reader checks the first characters as it is built: a control character raises here
        loader = _UniqueKeyLoader(stream)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, MAX_YAML_NODES)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    except _TooLarge as exc:
        raise error(f"{path}: {exc}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be an experiment spec") from None
    finally:
        loader.dispose()


def bundled_spec_path(name: str) -> Path:
    return Path(__file__).parent / "specs" / f"{name}.yaml"
