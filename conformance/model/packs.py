"""Suites as packs: what a pack declares, and how installed packs are found and validated.

A pack is a plain `Pack` value that a distribution names under the entry-point group
`mcp_conformance.suites` (entry-point name = the suite's one name):

    [project.entry-points."mcp_conformance.suites"]
    my-profile = "my_profile_pack:PACK"

The core imports no pack module until a pack is asked for: `installed()` loads the declarations (cheap
modules holding a `Pack`), `Pack.load()` imports the check modules. A declaration is refused when it
loads if it is not a `Pack` or not named as its entry point; before any pack's checks load, the
requirement rows of every installed pack are validated against `requirements.schema.json` and no ID may
be claimed twice (`conformance.model.requirements.table`); `vectors lint` checks the vector files. A broken
pack is refused with one line naming it and what is wrong (tests/model/test_packs.py installs such packs).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from conformance.model.targets import Target

ENTRY_POINT_GROUP = "mcp_conformance.suites"
#: The core's own requirement rows (the connect case of every suite), beside this module.
CORE_PACKAGE = "conformance"


class PackError(Exception):
    """A pack that cannot be used: the message is one line naming the pack and what is wrong."""


class PrepareHook(Protocol):
    """`Pack.prepare`: called once a target's URL is known (after its launch) and before it is probed;
    returns the target to run, with what the pack's checks need added (credentials as `headers` and
    `secrets`, so they are masked from the first byte recorded). Raise ValueError with a one-line
    reason when the target cannot be prepared (the target is then unreachable, with that reason)."""

    async def __call__(self, target: Target) -> Target: ...


class ReferenceSetupHook(Protocol):
    """`Pack.reference_setup`: the embedded reference's extra command-line arguments and target
    settings for transport `kind` ("stdio" or "http"), given a temporary folder of the run."""

    def __call__(self, kind: str, folder: str) -> tuple[tuple[str, ...], Mapping[str, Any]]: ...


@dataclass(frozen=True)
class PackOption:
    """A command-line option a pack owns (`run --fuzz-examples N`, `pytest --mcp-fuzz-examples N`).

    `type` converts and validates the text (raise ValueError with a one-line reason); the value reaches
    checks as `ctx.options.pack_option(dest)` and the report header's `options` under `dest`.
    """

    flag: str
    dest: str
    help: str
    type: Callable[[str], Any] = str
    default: Any = None
    metavar: str | None = None
    #: Called on the parsed value (or the default) once per run, to settle it: the fuzz seed is drawn
    #: here when none is given, so the report records the seed that reproduces the run.
    settle: Callable[[Any], Any] | None = None
    #: The value is the run's generator seed: `certify` records it as the bundle's seed.
    seed: bool = False


@dataclass(frozen=True)
class Pack:
    """One suite: its name, its requirement rows, vectors and schemas (files inside `package`), the
    modules whose import registers its checks, its options and, optionally, its reference server."""

    #: The suite's one name: `--suite NAME`, the first part of every check ID, the report's suite.
    name: str
    #: The package holding `requirements.json`, `vectors/*.json` and `schemas/*.schema.json`.
    package: str
    description: str
    #: Modules whose import registers the checks, in report order.
    checks: tuple[str, ...]
    #: Module of the reference server (`python -m MODULE`; `--http --port 0` for HTTP), if any; of a
    #: client pack, the reference client (`python -m MODULE URL`, by the official client contract).
    reference: str | None = None
    #: Module of the reference's fixture controller, for a reference that keeps state: the embedded
    #: default gives the reference's processes and the controller one state file (`--db FILE`).
    controller: str | None = None
    #: The first MCP revision the suite judges (the profiles bind structured tool output, which MCP has
    #: from 2025-06-18 on). None: every revision.
    since: str | None = None
    options: tuple[PackOption, ...] = ()
    #: Whether `run --server` without `--suite` runs this pack (the base protocol, and an extension pack
    #: whose rows SKIP at no cost on a server without the extension: a profile is run when the server
    #: claims it).
    default_for_servers: bool = False
    #: Whether the pack's checks may judge one Streamable HTTP server's revisions side by side when the
    #: user did not give `-j`: they change no server state that another revision's checks read (each
    #: revision keeps to sessions of its own). A profile whose checks write shared state (a store, a
    #: migration) leaves it False, and its runs keep one revision at a time unless `-j` asks otherwise.
    revisions_side_by_side: bool = False
    #: The protocol extension the pack judges (its identifier, `io.modelcontextprotocol/ui`), if any:
    #: naming such a pack with `--suite` claims its rows even when it runs by default.
    extension: str | None = None
    #: The distribution requirement the reference server needs, said in one line when it is missing.
    reference_requires: str = "mcp-conformance[reference]"
    #: The target-file tables the pack's checks read (`Target.settings`): table name -> the `$id` of a
    #: schema in the pack's `schemas/` folder. A target file's table is validated against its pack's
    #: schema when the file is read; a table no installed pack declares is a configuration error.
    settings: Mapping[str, str] = field(default_factory=dict)
    #: Where the pack stands in `list`, `run` and the reports: lower first, then by name.
    order: int = 100
    #: Per transport, the check that judges the rule an answer to a request can break there (over HTTP:
    #: a content type other than JSON or SSE) and that rule's requirement ID: `{"http": (check ID,
    #: requirement ID)}`. The engine runs that check last in each revision and names it in the cases
    #: whose verdict rested on such an answer (`conformance.engine.blocking`); the core names no pack.
    transport_judges: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: `module:function` of `async prepare(target) -> Target` (`PrepareHook`), run once a target's URL
    #: is known (after its launch) and before it is probed: a pack that needs credentials (the
    #: authorization pack's tokens) adds them as headers and `secrets`, so they are masked from the
    #: first byte recorded.
    prepare: str | None = None
    #: `module:function` of `setup(kind, folder) -> (args, settings)` (`ReferenceSetupHook`): the
    #: embedded reference's extra command-line arguments and target settings for transport `kind`,
    #: given a temporary folder.
    reference_setup: str | None = None
    #: The transports the embedded default serves the reference over.
    reference_transports: tuple[str, ...] = ("stdio", "http")
    #: Module of a fork server for the reference's processes (`serve FD`, `spawn MODULE ARGS...`; see
    #: `conformance.infra.prefork`): the embedded default then starts the reference server, its HTTP launch
    #: and its controller as forks of one process that has imported them. None: `python -m` each time.
    reference_forkserver: str | None = None
    #: What the pack judges (one of `SIDES`), which says the command that runs it: "server", an MCP
    #: server (`run`); "client", an MCP client (`client`: its checks read what a client sent to the
    #: scenario servers the pack scripts; docs/client.md); "authorization-server", an OAuth 2.1
    #: authorization server (`authorization`, against an issuer URL: `conformance.engine.issuer`).
    side: str = "server"

    def files(self) -> Traversable:
        return resources.files(self.package)

    def load(self) -> None:
        """Import the check modules (each registers its checks), in report order.

        The requirement table of every installed pack is read first: a run judges by all of it, so a
        broken row or a requirement ID claimed twice is refused before any server starts, not at the
        first case it would have judged.
        """
        from conformance.model.requirements import table

        table()
        for module in self.checks:
            importlib.import_module(module)

    def requirement_rows(self) -> list[dict[str, Any]]:
        return _rows(self.name, self.files().joinpath("requirements.json"))

    def vector_files(self) -> list[tuple[str, Traversable]]:
        """(`<suite>/<file>`, file) for every vector file of the pack, sorted by name."""
        folder = self.files().joinpath("vectors")
        if not folder.is_dir():
            return []
        entries = sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
        return [(f"{self.name}/{e.name}", e) for e in entries]

    def schema_files(self) -> list[Traversable]:
        folder = self.files().joinpath("schemas")
        if not folder.is_dir():
            return []
        return sorted((e for e in folder.iterdir() if e.name.endswith(".schema.json")), key=lambda e: e.name)

    def reference_command(self) -> list[str]:
        if self.reference is None:
            raise PackError(f"suite {self.name!r} has no reference server: give --server")
        return self._command(self.reference)

    def _command(self, module: str) -> list[str]:
        """`python -m module`, through the pack's fork server when it names one (started here)."""
        if self.reference_forkserver is None:
            return [sys.executable, "-m", module]
        from conformance.infra import prefork

        prefork.ensure(self.reference_forkserver)
        return prefork.spawn_command(self.reference_forkserver, module)

    def hook(self, spec: str) -> Callable[..., Any]:
        """The function a `module:function` field names, imported now (hooks are read when used)."""
        module, _, name = spec.partition(":")
        try:
            return cast(Callable[..., Any], getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError) as exc:
            raise PackError(f"suite {self.name!r}: cannot load its hook {spec!r}: {exc}") from None

    def prepare_hook(self) -> PrepareHook | None:
        """The `prepare` hook, typed, or None when the pack names none."""
        return cast(PrepareHook, self.hook(self.prepare)) if self.prepare else None

    def reference_setup_hook(self) -> ReferenceSetupHook | None:
        """The `reference_setup` hook, typed, or None when the pack names none."""
        return cast(ReferenceSetupHook, self.hook(self.reference_setup)) if self.reference_setup else None

    def controller_command(self) -> list[str] | None:
        return self._command(self.controller) if self.controller else None

    def reference_missing(self) -> str | None:
        """One line saying what to install for the reference server to run, or None when it can."""
        if self.reference is None:
            return f"suite {self.name!r} has no reference server: give --server"
        unmet = _unmet(self.reference_requires)
        if unmet:
            return (
                f"the {self.name} reference server needs {unmet}: pip install '{self.reference_requires}'"
                " (or give --server)"
            )
        return None


def _unmet(requirement: str) -> str | None:
    """The first requirement behind `dist[extra]` that the environment does not satisfy, as text."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        wanted = Requirement(requirement)
    except InvalidRequirement:
        return requirement
    queue, seen = [wanted], set()
    while queue:  # breadth first, in the order declared: `mcp==2.3.0 (installed: mcp 1.30.0)` comes first
        req = queue.pop(0)
        key = (req.name.lower(), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return str(req)
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            return f"{req} (installed: {req.name} {version})"
        for extra in req.extras:
            for line in metadata.requires(req.name) or []:
                sub = Requirement(line)
                if sub.marker is not None and sub.marker.evaluate({"extra": extra}):
                    sub.marker = None
                    queue.append(sub)
    return None


def _rows(owner: str, path: Traversable) -> list[dict[str, Any]]:
    """A requirement file's rows, validated against the requirements schema (one line per problem)."""
    from conformance import schemas

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PackError(f"suite {owner!r}: requirements.json cannot be read: {exc}") from None
    problems = schemas.errors(schemas.REQUIREMENTS_ID, None, data, limit=1)
    if problems:
        pointer, _, message = problems[0].partition(": ")
        row = _row_named(data, pointer)
        raise PackError(f"suite {owner!r}: requirements.json{row} breaks its schema at {pointer}: {message}")
    rows: list[dict[str, Any]] = data["requirements"]
    return rows


def _row_named(data: Any, pointer: str) -> str:
    """` row UWMD-TOOL-013` for a pointer inside a row, so the one line names the row at fault."""
    parts = pointer.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "requirements" and parts[1].isdigit():
        rows = data.get("requirements") if isinstance(data, dict) else None
        index = int(parts[1])
        if isinstance(rows, list) and index < len(rows) and isinstance(rows[index], dict):
            return f" row {rows[index].get('id', f'#{index}')}"
    return ""


def core_requirement_rows() -> list[dict[str, Any]]:
    return _rows("core", resources.files(CORE_PACKAGE).joinpath("requirements.json"))


@cache
def entry_points() -> tuple[metadata.EntryPoint, ...]:
    """The packs' entry points, read once per process (the scan reads every distribution's metadata;
    `installed()` and the `list` catalog's cache key both need them)."""
    return tuple(metadata.entry_points(group=ENTRY_POINT_GROUP))


@cache
def installed() -> dict[str, Pack]:
    """Every installed pack by name, in the order `list` and the reports show them (`Pack.order`, then
    the name): the core names no pack, each says where it stands."""
    found: dict[str, Pack] = {}
    for entry in sorted(entry_points(), key=lambda e: e.name):
        try:
            pack = entry.load()
        except Exception as exc:  # a pack that cannot even be imported: say which, in one line
            raise PackError(f"suite {entry.name!r} ({entry.value}) cannot be loaded: {exc}") from None
        if not isinstance(pack, Pack):
            raise PackError(f"suite {entry.name!r} ({entry.value}) is not a conformance.model.packs.Pack")
        if pack.name != entry.name:
            raise PackError(f"suite {entry.name!r} ({entry.value}) declares the name {pack.name!r}")
        if pack.name in found and found[pack.name] != pack:
            raise PackError(f"suite {pack.name!r} is installed twice ({entry.value})")
        found[pack.name] = pack
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


def names() -> tuple[str, ...]:
    return tuple(installed())


#: What a pack judges (`Pack.side`), each run by its own command: `run`, `client`, `authorization`. The
#: core names them; a pack may share a side's name (this repository's `client` and
#: `authorization-server` packs do), which is the side's word, not the pack's, in the core.
SIDES = ("server", "client", "authorization-server")
AUTHORIZATION_SERVER = "authorization-server"
#: What the packs of a side other than "server" judge, and the command that runs them (for a refusal).
_RUN_APART = {
    "client": ("an MCP client", "client"),
    AUTHORIZATION_SERVER: ("an authorization server", "authorization"),
}


def names_of(side: str) -> tuple[str, ...]:
    """The installed packs judging `side` (one of `SIDES`)."""
    return tuple(name for name, pack in installed().items() if pack.side == side)


def get(name: str) -> Pack:
    try:
        return installed()[name]
    except KeyError:
        known = ", ".join(installed()) or "none"
        raise PackError(f"unknown suite {name!r} (installed: {known})") from None


@cache
def transport_judges() -> dict[str, tuple[str, str]]:
    """Per transport, the (check ID, requirement ID) an installed pack declares as the judge of the
    rule an answer to a request can break there (`Pack.transport_judges`); one pack per transport."""
    judges: dict[str, tuple[str, str]] = {}
    for name, pack in installed().items():
        for transport, judge in pack.transport_judges.items():
            if transport in judges and judges[transport] != judge:
                raise PackError(
                    f"suite {name!r} declares {judge[0]} the judge of {transport} answers, which "
                    f"{judges[transport][0]} already is"
                )
            judges[transport] = (judge[0], judge[1])
    return judges


def judging_mcp_servers(suites: Iterable[str]) -> None:
    """Refuse a suite that judges something other than an MCP server (`Pack.side`): `run`, the pytest
    plugin and the API run MCP servers only; a client or authorization-server pack has its own command."""
    for suite in suites:
        side = get(suite).side
        if side != "server":
            what, command = _RUN_APART.get(side, (side, side))
            raise PackError(f"suite {suite!r} judges {what}: run `mcp-conformance {command}`")


def defaults_for_servers() -> tuple[str, ...]:
    return tuple(name for name, pack in installed().items() if pack.default_for_servers)


def side_by_side(suites: Iterable[str]) -> bool:
    """Whether every one of `suites` lets an HTTP server's revisions be judged side by side
    (`Pack.revisions_side_by_side`); an unknown name allows nothing."""
    found = installed()
    return all(name in found and found[name].revisions_side_by_side for name in suites)


@cache
def settings_tables() -> dict[str, tuple[str, str]]:
    """Every target-file table an installed pack declares: table -> (suite, schema `$id`).

    A declaration is checked here: the schema must be one of the pack's own files, and a table is one
    pack's (never the core's: `[target]`, `[timeouts]`, `[limits]`, `[controller]`).
    """
    return declared_tables(list(installed().values()))


def declared_tables(declaring: list[Pack]) -> dict[str, tuple[str, str]]:
    """`settings_tables` of these packs."""
    from conformance import schemas

    core = set(schemas.schema(schemas.TARGET_FILE_ID)["properties"])
    tables: dict[str, tuple[str, str]] = {}
    for pack in declaring:
        own = {_schema_id(entry) for entry in pack.schema_files()}
        for table, schema_id in pack.settings.items():
            if schema_id not in own:
                raise PackError(
                    f"suite {pack.name!r}: the schema {schema_id!r} of its target-file table [{table}]"
                    " is not in its schemas/ folder"
                )
            if table in core:
                raise PackError(f"suite {pack.name!r} declares the core's target-file table [{table}]")
            if table in tables:
                raise PackError(
                    f"suite {pack.name!r} declares the target-file table [{table}] of suite"
                    f" {tables[table][0]!r}"
                )
            tables[table] = (pack.name, schema_id)
    return tables


def _schema_id(entry: Traversable) -> str | None:
    try:
        found = json.loads(entry.read_text(encoding="utf-8")).get("$id")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def all_options() -> list[tuple[Pack, PackOption]]:
    return [(pack, option) for pack in installed().values() for option in pack.options]
