"""The check catalog `list` and `explain` read: each suite's checks (ID, requirement, title, revisions
judged) and the requirement rows they show, derived from the installed packs and cached.

Why a cache: the checks are known only once their modules are imported (the `@check` registrations), and
those modules import what the checks use (hypothesis, jsonschema, httpx, the engine): about half a second
that `list` would pay to print a table that changes only when a pack does. The catalog is derived data,
so it is kept in the user's cache folder (`$XDG_CACHE_HOME/mcp-conformance`, else
`~/.cache/mcp-conformance`) and trusted only while its key matches: the installed packs (names and their
distributions' versions), the Python that made it, and a fingerprint (path, mtime_ns, size) of every file
of the core package and of each pack's top-level package (check modules, helpers, `requirements.json`,
schemas), found without importing a check module. Anything else (a stale key, a file that cannot be read
or parsed, a shape that is not the catalog's) rebuilds it from the imported checks, and a cache that
cannot be written is simply not kept: the output is the same with or without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance.model.requirements import Requirement

#: Bumped whenever the catalog's shape or what it derives changes, so an older cache is never read.
FORMAT = 3


@dataclass(frozen=True)
class Entry:
    """One check as `list` and `explain` show it."""

    id: str
    requirement: str
    title: str
    #: The known revisions it judges, oldest first (`Check.revisions_judged`).
    revisions: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """The checks of the suites asked for, in registration order, and every requirement row they name
    (plus the connect row), as `Requirement` values."""

    checks: dict[str, list[Entry]]
    rows: dict[str, Requirement]
    #: The requirement of every suite's first case, reaching the target (the runner's
    #: `CONNECT_REQUIREMENT`, kept here because importing the runner is importing the whole engine).
    connect: str
    #: The official release's label, and each official check the rows name as `scenario:check` (read
    #: from `official.json`, a core file the key fingerprints, whose load validates it with jsonschema).
    official_label: str = ""
    official: dict[str, list[str]] | None = None


def catalog(suites: Sequence[str]) -> Catalog:
    """The catalog of `suites`: from the cache when its key still matches, else built from the imported
    checks (and the cache rewritten, best effort)."""
    key = cache_key()
    path = cache_path()
    cached = _read(path, key) if path is not None else None
    stored: dict[str, Any] = cached or {"suites": {}, "rows": {}, "connect": "", "official": {}}
    missing = [s for s in suites if s not in stored["suites"]]
    if missing:
        _add(stored, missing)
        if path is not None:
            _write(path, {"format": FORMAT, "key": key, **stored})
    return _catalog_of(stored, suites)


def cache_path() -> Path | None:
    """This environment's cache file (one per environment and core location, so two venvs never evict
    each other, and `python -m conformance` and the `mcp-conformance` script share one), or None when
    there is no home to keep it in."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    where = f"{sys.prefix}\0{_core_dir()}".encode()
    return Path(base) / "mcp-conformance" / f"catalog-{hashlib.sha256(where).hexdigest()[:16]}.json"


def cache_key() -> dict[str, Any]:
    """What the catalog is derived from, read without importing a check module."""
    from conformance.model import packs

    installed = packs.installed()
    dists = _distributions(packs.entry_points())
    roots = {_core_dir()}
    for pack in installed.values():
        roots.update(_package_roots(pack.package))
        for module in pack.checks:
            roots.update(_package_roots(module))
    digest = hashlib.sha256()
    for root in sorted(roots):
        for line in _fingerprint(root):
            digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return {
        "python": sys.implementation.cache_tag,
        "packs": [[name, pack.package, list(pack.checks)] for name, pack in installed.items()],
        "dists": [list(d) for d in dists],
        "files": digest.hexdigest(),
    }


def _distributions(entries: Iterable[metadata.EntryPoint]) -> list[tuple[str, str, str, str]]:
    """(suite, entry point, distribution, version) of each pack. The version is read from the
    `name-version.dist-info` folder's name (the standard's form) where the distribution is one: parsing
    its metadata takes an email parser, several ms a distribution. Whichever path found it (a checkout's
    `.egg-info` when run from there, the environment's `.dist-info` elsewhere), the key is the same."""
    seen: dict[str, tuple[str, str]] = {}
    out = []
    for entry in entries:
        dist = entry.dist
        where = getattr(dist, "_path", None)
        place = str(where)
        if place not in seen:
            if isinstance(where, Path) and where.suffix == ".dist-info" and "-" in where.stem:
                name, _, version = where.stem.partition("-")
            elif dist is not None:
                name, version = str(dist.name), str(dist.version)
            else:
                name, version = "?", "?"
            seen[place] = (re.sub(r"[-_.]+", "_", name).lower(), version)
        out.append((entry.name, entry.value, *seen[place]))
    return sorted(out)


def _core_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _package_roots(module: str) -> set[str]:
    """The files or folders whose change may change what `module` registers: its top-level package's
    folders (a pack's helpers and data live beside its check modules), or the module file itself when
    the top level is a single module. Found by `find_spec` of the top-level name, which imports nothing
    (a namespace package or a plain module) or only that package's `__init__` (a pack declaration,
    imported already to read the `Pack`)."""
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return {f"missing:{module}"}
    if spec.submodule_search_locations:
        return {os.path.abspath(p) for p in spec.submodule_search_locations}
    return {os.path.abspath(spec.origin)} if spec.origin else {f"unlocated:{module}"}


def _fingerprint(root: str) -> Iterable[str]:
    """`path mtime_ns size` of `root` (a file) or of every file below it, bytecode caches left out."""
    if not os.path.isdir(root):
        try:
            st = os.stat(root)
        except OSError:
            yield f"{root} absent"
            return
        yield f"{root} {st.st_mtime_ns} {st.st_size}"
        return
    stack = [root]
    lines: list[str] = []
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            lines.append(f"{folder} unreadable")
            continue
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            try:
                if entry.is_dir():
                    stack.append(entry.path)
                    continue
                st = entry.stat()
            except OSError:
                lines.append(f"{entry.path} unreadable")
                continue
            lines.append(f"{entry.path} {st.st_mtime_ns} {st.st_size}")
    yield from sorted(lines)


def _read(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The cached suites and rows, or None when the file is absent, unreadable, of another key, or not
    shaped as a catalog (then it is rebuilt, never half-trusted)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            return None
        suites, rows, connect = data["suites"], data["rows"], data["connect"]
        if not isinstance(suites, dict) or not isinstance(rows, dict) or not isinstance(connect, str):
            return None
        for entries in suites.values():
            for entry in entries:
                if _entry(entry).requirement not in rows:
                    return None
        for row in rows.values():
            _row(row)
        if connect not in rows:
            return None
        official = data.get("official", {})
        if not isinstance(official, dict):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return {"suites": suites, "rows": rows, "connect": connect, "official": official}


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace the cache file atomically (a reader sees the old file or the new one, never half of
    one); a folder that cannot be written leaves no cache, which only costs the next run time."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".catalog-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, separators=(",", ":"))
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _add(stored: dict[str, Any], suites: Sequence[str]) -> None:
    """Import `suites`' checks and add their entries, and the rows they name, to `stored`."""
    from conformance.engine.checks import load_pack
    from conformance.engine.runner import CONNECT_REQUIREMENT
    from conformance.model.requirements import get

    stored["connect"] = CONNECT_REQUIREMENT
    wanted = [CONNECT_REQUIREMENT]
    for suite in suites:
        checks = load_pack(suite)
        stored["suites"][suite] = [[c.id, c.requirement, c.title, c.revisions_judged()] for c in checks]
        wanted += [c.requirement for c in checks]
    for requirement in wanted:
        stored["rows"][requirement] = get(requirement).as_dict()
    _add_official(stored)


def _add_official(stored: dict[str, Any]) -> None:
    """The official names of the checks the stored rows name, so `explain` prints them unloaded."""
    from conformance.model import official

    data = official.load()
    checks = {c for row in stored["rows"].values() for c in row.get("official", {}).get("checks", ())}
    stored["official"] = {"label": data.label, "qualified": {c: data.qualified([c]) for c in sorted(checks)}}


def _entry(data: Any) -> Entry:
    check_id, requirement, title, revisions = data
    texts = (check_id, requirement, title, *revisions)
    if not all(isinstance(t, str) for t in texts) or not isinstance(revisions, list):
        raise ValueError("not a catalog entry")
    return Entry(check_id, requirement, title, tuple(revisions))


def _row(data: Any) -> Requirement:
    if not isinstance(data, dict):
        raise ValueError("not a requirement row")
    return Requirement(**data)


def _catalog_of(stored: dict[str, Any], suites: Sequence[str]) -> Catalog:
    checks = {suite: [_entry(e) for e in stored["suites"][suite]] for suite in suites}
    named = {stored["connect"], *(e.requirement for entries in checks.values() for e in entries)}
    rows = {rid: _row(stored["rows"][rid]) for rid in sorted(named)}
    said = stored.get("official") or {}
    return Catalog(checks, rows, stored["connect"], said.get("label", ""), said.get("qualified"))
