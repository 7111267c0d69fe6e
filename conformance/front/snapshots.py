"""Regression snapshots of a server's wire behaviour, stored with syrupy, one file per case.

Why, beside verdicts: a verdict says whether a requirement holds; it does not notice that a server
started answering with another error message, dropped a field no requirement names, or reordered its
tool list. A snapshot records what the server actually said in every case, so `pytest
--snapshot-update` captures today's behaviour and every later run shows each drift as a diff, while
conformance verdicts stay the separate judgement they are.

Only what the server controls may drift, so everything that changes from run to run or machine to
machine is masked before storing: JSON-RPC ids (mapped to ordinals per case, keeping their type and
which response echoes which request), times, dates, durations, pids, ports, session ids, UUIDs and
this machine's paths; keys are sorted, and JSON bodies are stored parsed.

    from conformance.front.snapshots import assert_snapshots, record

    def test_my_server_wire(snapshot):
        assert_snapshots(snapshot, record(["stdio:python -m my_server"], ["base"]))

`record` runs the suites like `mcp-conformance run`, but keeps the transcript of passing cases too
(the canonical report keeps it only for cases that did not pass, to stay small).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.model.targets import Target

_PID = re.compile(r"\bpid \d+")
_PORT = re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX32 = re.compile(r"\b[0-9a-f]{32}\b")
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
_SECONDS = re.compile(r"\b\d+(\.\d+)? ?(s|ms)\b")
#: Unix times in seconds or milliseconds between 2001 and 2286: a clock, not behaviour.
_EPOCH_TEXT = re.compile(r"(?<![\d.])1\d{9}(\d{3})?(\.\d+)?(?![\d.])")
#: Headers whose values are volatile by nature (when, how long, which session, which server build).
VOLATILE_HEADERS = {
    "date": "<date>",
    "content-length": "<length>",
    "mcp-session-id": "<session>",
    "server": "<server>",
}
#: JSON members that carry a request id elsewhere than the envelope's `id`.
ID_MEMBERS = ("requestId",)


def _local_paths() -> list[tuple[str, str]]:
    """This machine's paths, longest first, so a snapshot recorded here compares equal elsewhere."""
    here = Path(__file__).resolve().parents[1].parent
    pairs = {
        sys.executable: "<python>",
        str(Path(sys.executable).resolve()): "<python>",
        sys.prefix: "<prefix>",
        sys.base_prefix: "<base-prefix>",
        str(here): "<source>",
        os.getcwd(): "<cwd>",
        tempfile.gettempdir(): "<tmp>",
        str(Path.home()): "<home>",
    }
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


class Normaliser:
    """Masks one case's transcript. Ids and sessions are numbered per case, in order of appearance."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.sessions: dict[str, str] = {}
        self.paths = _local_paths()

    def text(self, value: str) -> str:
        for path, mark in self.paths:
            value = value.replace(path, mark)
        value = _PID.sub("pid <pid>", value)
        value = _PORT.sub(r"\1:<port>", value)
        value = _UUID.sub("<uuid>", value)
        value = _HEX32.sub("<hex>", value)
        value = _ISO_TIME.sub("<time>", value)
        value = _EPOCH_TEXT.sub("<epoch>", value)
        return _SECONDS.sub("<duration>", value)

    def request_id(self, value: Any) -> Any:
        if value is None or isinstance(value, bool):
            return value
        token = json.dumps(value)
        if token not in self.ids:
            self.ids[token] = f"<id {len(self.ids) + 1}: {type(value).__name__}>"
        return self.ids[token]

    def json_value(self, value: Any, *, envelope: bool = False) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if (envelope and key == "id") or key in ID_MEMBERS:
                    out[key] = self.request_id(item)
                else:
                    out[key] = self.json_value(item)
            if out.get("name") == "mcp-conformance" and "version" in out:
                out["version"] = "<harness version>"  # the harness's clientInfo: not the server's doing
            return out
        if isinstance(value, list):
            return [self.json_value(item, envelope=envelope) for item in value]
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int | float) and not isinstance(value, bool) and _is_epoch(value):
            return "<epoch>"
        return value

    def header(self, name: str, value: str) -> str:
        lower = name.lower()
        if lower == "mcp-session-id":
            if value not in self.sessions:
                self.sessions[value] = f"<session {len(self.sessions) + 1}>"
            return self.sessions[value]
        if lower in VOLATILE_HEADERS:
            return VOLATILE_HEADERS[lower]
        return self.text(value)

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"dir": entry.get("dir")}
        for key in ("channel", "note"):
            if entry.get(key):
                out[key] = self.text(entry[key])
        for key in ("status", "truncated_from", "base64"):
            if key in entry:
                out[key] = entry[key]
        if entry.get("headers"):
            out["headers"] = {k.lower(): self.header(k, v) for k, v in entry["headers"].items()}
        if "text" in entry:
            try:
                out["json"] = self.json_value(json.loads(entry["text"]), envelope=True)
            except ValueError:
                out["text"] = self.text(entry["text"])
        return out


def _is_epoch(value: float) -> bool:
    return 1e9 <= value < 1e10 or 1e12 <= value < 1e13


def normalise(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One case's transcript with every volatile value masked (times dropped, ids numbered)."""
    normaliser = Normaliser()
    return [normaliser.entry(entry) for entry in entries]


def record(
    servers: Sequence[str | Target] | None = None,
    suites: Sequence[str] | None = None,
    *,
    select: str | None = None,
    options: RunOptions | None = None,
) -> dict[str, dict[str, Any]]:
    """Run the suites and return, per case key, the case's normalised transcript, ready to snapshot.

    The verdict is deliberately left out: a snapshot records behaviour; the report judges it.
    """
    options = dataclasses.replace(options or RunOptions(), keep_transcripts=True)
    report = api.run_report(servers, suites, select=select, options=options)
    return {
        case["key"]: {"case": case["key"], "transcript": normalise(case["transcript"])}
        for case in report["cases"]
    }


class TranscriptSnapshotExtension(SingleFileSnapshotExtension):
    """One JSON file per snapshot (per case, when asserted with `name=case_key`), keys sorted."""

    _write_mode = WriteMode.TEXT
    file_extension = "wire.json"

    def serialize(self, data: Any, **_: Any) -> str:
        if isinstance(data, list):  # a raw transcript: normalise it here
            data = {"transcript": normalise(data)}
        return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def assert_snapshots(snapshot: Any, cases: dict[str, dict[str, Any]]) -> None:
    """Compare every case with its stored snapshot and fail once, listing every drift with its diff.

    `snapshot` is syrupy's fixture. Each comparison is recorded with syrupy, so `--snapshot-update`
    writes (or rewrites) one file per case and reports unused ones, as for any syrupy assertion.
    """
    wire = snapshot.use_extension(TranscriptSnapshotExtension)
    drifts = []
    for key, case in cases.items():
        matched = wire(name=key) == case  # syrupy's `==` records the assertion (and, updating, writes it)
        if not matched:
            drifts.append(f"{key}:\n" + "\n".join(wire.get_assert_diff()))
    if drifts:
        raise AssertionError(
            f"{len(drifts)} of {len(cases)} cases drifted from their snapshots:\n" + "\n\n".join(drifts)
        )
