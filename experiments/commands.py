"""Every `twinlab` command, declared as data and mounted lazily: twinlab's own packages, kinds and studies alike.

A package, a kind or a study says `COMMANDS` in its light `__init__`: a tuple of plain records,

    {"group": "stimuli import", "name": "lakretz-text", "module": "stimuli.commands", "function": "import_text",
     "help": "one line for the listing"}

`group` is the sub-app the command joins ("" for `twinlab` itself, "stimuli", "stimuli import", "import"),
`module` is dotted inside the package, `function` names there a typer command function, a typer app (a group of
commands: `twinlab reproduce ...`) or a built click command. The CLI lists each command with its `help` without
importing anything (`twinlab --help` stays fast); the module is imported, and its options read, only when the
command runs or its own `--help` is asked. So a command module imports what it uses at its top.
twinlab's packages are found through the entry points of the group `twinlab.commands` (pyproject.toml: a package
name), kinds and studies through their one registry (experiments/kinds.py, experiments/studies.py).
"""
from __future__ import annotations

import importlib
import importlib.metadata
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import typer
from typer.core import TyperCommand, TyperGroup

from experiments.kinds import kind_module, kind_names
from experiments.studies import study_module, study_names

# every typer app of twinlab takes these: click's plain help, which wraps a long value onto the next line where
# rich's tables cut it with "..." in a narrow terminal (80 columns), and writes no box drawing into a log
HELP_LAYOUT: dict[str, Any] = {"rich_markup_mode": None}
GROUPS = ("", "stimuli", "stimuli import", "import")  # the sub-apps a declared command may join
FIELDS = ("group", "name", "module", "function", "help")


class PanelledCommand(TyperCommand):
    """A command whose plain help lists its options by panel (an option's `rich_help_panel`: a study's options
    under the study's heading), as rich's help would, without rich's tables."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        args, panels = [], {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append(record)
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        for panel, records in panels.items():
            formatter.write_paragraph()  # a long heading (a study's title) wraps as the rest of the help does
            for line in textwrap.wrap(f"{panel}:", width=max((formatter.width or 80) - 1, 40)):
                formatter.write(f"{line}\n")
            with formatter.indentation():
                formatter.write_dl(records)


class CommandDeclarationError(ValueError):
    """A kind or study declares a command the CLI cannot mount (names the owner and the field)."""


@dataclass(frozen=True)
class Declared:
    """One declared command: where it is listed, and where its function lives (imported when it runs)."""

    owner: str  # "kind <name>" or "study <name>": for messages
    group: str
    name: str
    module: str  # absolute module name
    function: str
    help: str


def check_declaration(owner: str, package: str, entry: Any) -> Declared:
    if not isinstance(entry, dict) or set(entry) != set(FIELDS):
        raise CommandDeclarationError(f"{owner}: COMMANDS: each entry is a mapping of exactly {', '.join(FIELDS)} "
                                      f"(got {entry!r})")
    if entry["group"] not in GROUPS:
        raise CommandDeclarationError(f"{owner}: COMMANDS: group {entry['group']!r} is not one of "
                                      f"{', '.join(repr(g) for g in GROUPS)}")
    if not all(isinstance(entry[f], str) and entry[f] for f in FIELDS if f != "group"):
        raise CommandDeclarationError(f"{owner}: COMMANDS: {entry!r}: name, module, function and help are non-empty "
                                      "texts")
    return Declared(owner, entry["group"], entry["name"], f"{package}.{entry['module']}", entry["function"],
                    entry["help"])


COMMANDS_GROUP = "twinlab.commands"
REPO = Path(__file__).resolve().parents[1]


def command_packages() -> list[tuple[str, str]]:
    """(entry point name, package) of every package that adds commands to `twinlab`, sorted by name.

    The ground floor names no package above it: each vertical declares its package in pyproject.toml under
    `[project.entry-points."twinlab.commands"]` (a new one adds one line there and `COMMANDS` in its
    `__init__`). Read from the installed metadata, plus the same table of this checkout's pyproject.toml, so a
    source checkout whose editable install predates a new entry still gets it."""
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=COMMANDS_GROUP)}
    pyproject = REPO / "pyproject.toml"
    if pyproject.is_file():
        table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        found |= table.get("entry-points", {}).get(COMMANDS_GROUP, {})
    return sorted(found.items())


def command_owners() -> list[tuple[str, ModuleType]]:
    """(owner, package) of every package declaring `COMMANDS`, in listing order: the ground floor (`experiments`),
    the packages of the entry points (a package that is not installed is skipped), the kinds, the studies."""
    owners: list[tuple[str, ModuleType]] = [("package experiments", importlib.import_module("experiments"))]
    for name, value in command_packages():
        try:
            owners.append((f"package {name}", importlib.import_module(value)))
        except ModuleNotFoundError as exc:
            if not (exc.name and value.startswith(exc.name)):
                raise
    owners += [(f"kind {k}", kind_module(k)) for k in kind_names()]
    owners += [(f"study {s}", study_module(s)) for s in study_names()]
    return owners


def declared_commands() -> list[Declared]:
    """Every command twinlab's packages, the registered kinds and the studies declare, in listing order; a name
    declared twice in one group is refused (naming both owners)."""
    owners = command_owners()
    out: list[Declared] = []
    seen: dict[tuple[str, str], str] = {}
    for owner, package in owners:
        for entry in getattr(package, "COMMANDS", None) or ():
            cmd = check_declaration(owner, package.__name__, entry)
            if (cmd.group, cmd.name) in seen:
                raise CommandDeclarationError(f"{owner}: COMMANDS: `twinlab {cmd.group} {cmd.name}` is also "
                                              f"declared by {seen[(cmd.group, cmd.name)]}")
            seen[(cmd.group, cmd.name)] = owner
            out.append(cmd)
    return out


class LazyCommand(click.Command):
    """A declared command as listed (its name and help only); the real typer command is built from the
    declared function when the command is parsed, run or asked for its own help."""

    def __init__(self, decl: Declared) -> None:
        super().__init__(decl.name, help=decl.help, short_help=decl.help)
        self.decl = decl
        self._real: click.Command | None = None

    def real(self) -> click.Command:
        if self._real is None:
            self._real = built_command(self.decl)
        return self._real

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        return self.real().make_context(info_name, args, parent=parent, **extra)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        return self.real().get_params(ctx)

    def invoke(self, ctx: click.Context) -> Any:
        return self.real().invoke(ctx)


def built_command(decl: Declared) -> TyperCommand | TyperGroup:
    """The command a declaration names: a typer app (a group), a command as built, or a typer command
    function (its docstring its help; the declared help where it has none)."""
    obj = getattr(importlib.import_module(decl.module), decl.function)
    if isinstance(obj, (TyperCommand, TyperGroup)):
        return obj
    if isinstance(obj, typer.Typer):
        return typer.main.get_group(obj)  # as a sub-app: no shell-completion options of its own
    one = typer.Typer(add_completion=False, **HELP_LAYOUT)
    one.command(decl.name, help=None if obj.__doc__ else decl.help)(obj)
    return typer.main.get_command(one)  # one command: typer returns the command itself


class ListingGroup(TyperGroup):
    """A group whose listing gives each command's whole description (click would cut it at the width with
    "..."), wrapped onto the next lines."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, listing_help(cmd)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def lazy_group(group: str) -> type[TyperGroup]:
    """The click group class of the sub-app `group`: its own commands, and first the declared ones."""

    class Group(ListingGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            own = dict(self.commands)
            self.commands = {d.name: LazyCommand(d) for d in declared_commands() if d.group == group}
            for name, cmd in own.items():
                if name in self.commands:
                    raise CommandDeclarationError(f"{self.commands[name].decl.owner}: COMMANDS: "
                                                  ""  # type: ignore[attr-defined]
                                                  f"`twinlab {group} {name}` is a command of twinlab itself")
                self.commands[name] = cmd

    Group.__name__ = f"Group_{group.replace(' ', '_') or 'twinlab'}"
    return Group


def listing_help(cmd: click.Command) -> str:
    """What a command listing says of `cmd`: its short help, else the first paragraph of its help as one line
    (a docstring's hard line breaks joined)."""
    text = cmd.short_help or (cmd.help or "").strip().split("\n\n")[0]
    return " ".join(text.split())
