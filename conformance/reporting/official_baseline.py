"""`baseline import-official FILE`: an official expected-failures file turned into this harness's baseline.

SDK teams keep their known failures in the official suite's format (`server:` and `client:` lists of
`scenario` or `scenario:check-id` entries). The import maps each entry to the rows that judge its checks
(`official.checks` of a row; the server side's rows for a `server:` entry, the client packs' rows, by
`official.json`'s client section, for a `client:` one), and those rows to their checks here, so the result
is a baseline like any other (`conformance.reporting.baseline`), read by `run --baseline` and `client
--baseline` alike: a listed case that passes is XPASS and fails the run, so a stale entry cannot hide. A
client entry names its checks in its scenario only (`check/scenario`), as one client check judges every
scenario it is played in. An entry that maps to nothing (an unknown scenario or check, a check no row
judges, a scenario not played here) is said in one line each, and left out.

The file is read by a parser of the format's small YAML subset (block lists of plain or quoted scalars
under the two keys, comments), not by a YAML library: PyYAML is no dependency of the harness, and
anything outside the subset is refused with its line number rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from conformance.reporting.baseline import FORMAT, FORMAT_VERSION

SECTIONS = ("server", "client")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ \t]*(\[[ \t]*\])?[ \t]*(#.*)?")
_ITEM = re.compile(r"[ \t]*-(?:[ \t]+(.*))?")


class OfficialBaselineError(ValueError):
    """The file is not the expected-failures subset (one line, with the line number)."""


def parse(text: str) -> dict[str, list[str]]:
    """The sections of an expected-failures file: section -> its entries as written."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#") or (line == "---" and not sections):
            continue
        key = _KEY.fullmatch(line)
        if key:
            name = key.group(1)
            if name not in SECTIONS:
                raise OfficialBaselineError(f"line {number}: unknown key {name!r} (expected server, client)")
            if name in sections:
                raise OfficialBaselineError(f"line {number}: {name!r} appears twice")
            sections[name], current = [], (None if key.group(2) else name)
            continue
        item = _ITEM.fullmatch(line)
        if item and current is not None:
            sections[current].append(_scalar(item.group(1) or "", number))
            continue
        raise OfficialBaselineError(
            f"line {number}: not an expected-failures line (`server:`, then `- scenario` or"
            f" `- scenario:check-id`): {raw.strip()[:80]!r}"
        )
    return sections


def _scalar(text: str, number: int) -> str:
    """One entry: a quoted or plain scalar, a trailing comment allowed; refused when YAML would read a
    mapping (`- scenario: check`, a space after the colon) or anything but a string."""
    if text[:1] in ("'", '"'):
        quote = text[0]
        end = 1
        value = []
        while end < len(text):
            ch = text[end]
            if ch == quote and quote == "'" and text[end + 1 : end + 2] == "'":
                value.append("'")
                end += 2
                continue
            if ch == quote:
                break
            if ch == "\\" and quote == '"':
                raise OfficialBaselineError(f"line {number}: escapes in a quoted entry are not supported")
            value.append(ch)
            end += 1
        else:
            raise OfficialBaselineError(f"line {number}: unterminated quoted entry")
        rest = text[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            raise OfficialBaselineError(f"line {number}: text after a quoted entry: {rest[:40]!r}")
        entry = "".join(value)
    else:
        entry = re.split(r"[ \t]+#", text, maxsplit=1)[0].strip()
        if ": " in entry or entry.endswith(":"):
            raise OfficialBaselineError(
                f"line {number}: {entry!r} reads as a mapping; a per-check entry takes no space after"
                " the colon (`scenario:check-id`)"
            )
        if entry[:1] in tuple("[]{}&*!|>%@`,?-") or entry in ("", "~", "null"):
            raise OfficialBaselineError(f"line {number}: {entry!r} is not a scenario or scenario:check-id")
    if not entry or entry.startswith(":") or entry.endswith(":"):
        raise OfficialBaselineError(f"line {number}: empty scenario or check in {entry!r}")
    return entry


def import_entries(
    sections: Mapping[str, Sequence[str]],
    official: Any,
    rows: Mapping[str, Any],
    checks: Iterable[Any],
    side_of: Mapping[str, str],
    judges_in: Mapping[str, frozenset[str] | None] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """(baseline data, one line per entry not mapped). `official` is `conformance.model.official.load()`,
    `rows` the requirement rows by ID, `checks` every check of the installed packs (catalog entries:
    `id`, `requirement`) and `side_of` each pack's side. A `server:` entry maps through the rows of the
    packs judging servers to their checks; a `client:` entry through the client packs' rows to their
    checks in that scenario only (`check/scenario`: a client check judges many scenarios). `judges_in`
    names the scenarios each client check is played in (None: every one), so an entry never becomes a
    key no run can have: one row's official check is judged in many scenarios, each by its own check."""
    judges_in = judges_in or {}
    reasons: dict[str, list[str]] = {}
    unmapped: list[str] = []
    for section in SECTIONS:
        if not sections.get(section):
            continue
        side = official if section == "server" else official.client
        client = section == "client"
        if side is None:  # an official.json without a client section
            unmapped += [f"client:{entry}: no client side is listed" for entry in sections[section]]
            continue
        mine = {rid: row for rid, row in rows.items() if (side_of.get(row.suite) == "client") == client}
        by_check = _rows_by_check(mine.values())
        own = _checks_by_row(checks, mine)
        for entry in sections[section]:
            ours, why = _map_entry(entry, side, by_check, own)
            said = f"client:{entry}" if client else entry
            if why:
                unmapped.append(f"{said}: {why}")
            scope = "/" + entry.partition(":")[0] if client else ""
            if client:
                ours = [name for name in ours if _played_in(judges_in.get(name), scope[1:])]
                if not ours and not why:
                    unmapped.append(f"{said}: no check here plays that scenario")
            for name in ours:
                listed = reasons.setdefault(name + scope, [])
                if said not in listed:
                    listed.append(said)
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "expected_failures": [
            {"case": case, "reason": "official expected failure: " + ", ".join(entries)}
            for case, entries in sorted(reasons.items())
        ],
    }
    return data, unmapped


def _played_in(scenarios: frozenset[str] | None, scenario: str) -> bool:
    return scenarios is None or scenario in scenarios


def _rows_by_check(rows: Iterable[Any]) -> dict[str, list[str]]:
    by_check: dict[str, list[str]] = {}
    for row in rows:
        for check in row.official_checks:
            by_check.setdefault(check, []).append(row.id)
    return by_check


def _checks_by_row(checks: Iterable[Any], rows: Mapping[str, Any]) -> dict[str, list[str]]:
    own: dict[str, list[str]] = {}  # row ID -> our check IDs
    for entry in checks:
        if entry.requirement in rows:
            own.setdefault(entry.requirement, []).append(entry.id)
    return own


def _map_entry(
    entry: str, side: Any, by_check: Mapping[str, list[str]], own: Mapping[str, list[str]]
) -> tuple[list[str], str]:
    """Our check IDs for one entry of a side, or none and why not."""
    scenario, _, check = entry.partition(":")
    if scenario in side.unlisted:
        return [], f"not judged here ({side.unlisted[scenario].why})"
    if scenario not in side.scenarios:
        return [], f"no {side.side} scenario of {side.label} is named {scenario!r}"
    if check and check not in side.scenarios[scenario]:
        return [], f"{scenario!r} emits no check {check!r} in {side.label}"
    wanted = [check] if check else list(side.scenarios[scenario])
    rows = [row for name in wanted for row in by_check.get(name, ())]
    ours = list(dict.fromkeys(ours_id for row in rows for ours_id in own.get(row, ())))
    return ours, "" if ours else _why_not(wanted, side)


def _why_not(checks: Sequence[str], official: Any) -> str:
    """Why no row judges these official checks: official.json's reasons, or none."""
    said = sorted({f"{official.not_judged[c].reason}" for c in checks if c in official.not_judged})
    return "no row judges it here (" + (", ".join(said) or "no row names its checks") + ")"
