"""A case's reproduction: the requests the harness sent in it, as commands a user can paste.

Why derived from the transcript: it holds the bytes the harness sent in the case, exactly (a stdio line
is the message plus `\\n`; an HTTP request is its method, URL, headers and body), so the reproduction
is what the check did, not a guess at it. Over stdio it is `printf '%s\\n' LINE... | COMMAND`, one per
server process the case used; over HTTP one `curl` per request. A legacy session's opening
(`initialize`, then `notifications/initialized`) happened before the case's part of the transcript, so
it is prepended as the harness sends it; a session ID is a shell variable to fill in, and what the
report masked (`[redacted]`) or cut stays so, each said in a note.

Pure: it reads the report model only (`Case`, `Target`), so every view can show the same commands.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.protocol.versions import LEGACY_REVISIONS, initialize_params
from conformance.reporting.model import Case, Target
from conformance.text import REDACTED

SESSION_HEADER = "mcp-session-id"
SESSION_VARIABLE = "MCP_SESSION_ID"


@dataclass(frozen=True)
class Reproduction:
    """The commands to paste, in order, and what a user must know to run them."""

    commands: tuple[str, ...]
    notes: tuple[str, ...]
    #: How many of the requests are the case's own (the rest open a session).
    requests: int

    def text(self) -> str:
        """The notes as shell comments, then the commands: one block a user can paste whole."""
        return "\n".join([*(f"# {note}" for note in self.notes), *self.commands])


def reproduction(case: Case, target: Target | None, harness_version: str) -> Reproduction | None:
    """The case's requests as commands, or None when it sent nothing (a SKIP, a connect case). A
    client's case is the client run again on its one scenario: what it sent is its own to send."""
    if target is not None and target.side == "client" and target.command:
        return _client_again(case, target.command)
    sends = [entry for entry in case.transcript if entry.get("dir") == "send"]
    if not sends:
        return None
    notes = _cut_notes(sends)
    if case.transport == "stdio":
        commands, more = _stdio(case, target, harness_version)
    else:
        commands, more = _http(case, target, sends, harness_version)
    return Reproduction(tuple(commands), tuple(dict.fromkeys(notes + more)), len(sends))


def _client_again(case: Case, command: str) -> Reproduction:
    scenario = str(case.evidence.get("scenario", ""))
    argv = ["mcp-conformance", "client", "--command", command, "--scenario", scenario]
    argv += ["--transport", case.transport, "--revision", case.revision]
    note = "the client judged is run again by the contract, on this scenario alone (docs/client.md)"
    return Reproduction((shlex.join(argv),), (note,), 0)


def _cut_notes(sends: Sequence[Mapping[str, Any]]) -> list[str]:
    notes = []
    if any(REDACTED in _text(entry) or REDACTED in json.dumps(entry.get("headers") or {}) for entry in sends):
        notes.append(f"{REDACTED} stands for a secret the report masks: put yours in its place")
    if any("truncated_from" in entry for entry in sends):
        notes.append(
            "a request was cut in the report (over 64 kB): it is sent cut here, not as the harness did"
        )
    return notes


def _text(entry: Mapping[str, Any]) -> str:
    if "base64" in entry:
        return base64.b64decode(entry["base64"]).decode("utf-8", "surrogateescape")
    return str(entry.get("text") or "")


def _method(text: str) -> str:
    try:
        message = json.loads(text)
    except ValueError:
        return ""
    return str(message.get("method") or "") if isinstance(message, dict) else ""


def opening(revision: str, harness_version: str) -> list[str]:
    """A legacy session's opening as the harness sends it (`protocol.session.Session.open`): initialize
    offering `revision`, no capabilities, the harness as client, then notifications/initialized."""
    params = initialize_params(revision, {}, harness_version)
    return [
        _compact({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
        _compact({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


def _compact(message: dict[str, Any]) -> str:
    """A message as the harness writes it (`protocol.jsonrpc`): no spaces, characters as they are."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _needs_opening(revision: str, texts: Sequence[str]) -> bool:
    return revision in LEGACY_REVISIONS and not any(_method(text) == "initialize" for text in texts)


# --- stdio ---------------------------------------------------------------------------------------


def _processes(case: Case) -> list[list[str]]:
    """The lines sent on stdin, one list per server process the case used (a `started pid` event
    begins a new one)."""
    runs: list[list[str]] = [[]]
    for entry in case.transcript:
        if entry.get("dir") == "event" and str(entry.get("note", "")).startswith("started pid") and runs[-1]:
            runs.append([])
        elif entry.get("dir") == "send" and entry.get("channel", "stdin") == "stdin":
            runs[-1].append(_text(entry))
    return [lines for lines in runs if lines]


def _stdio(case: Case, target: Target | None, version: str) -> tuple[list[str], list[str]]:
    spec = target.spec if target is not None else ""
    notes = []
    if spec.startswith("stdio:"):
        command = spec[len("stdio:") :].strip()
    else:
        command = "YOUR-SERVER-COMMAND"
        notes.append(f"{command}: the command of target {case.target} ({spec or 'unknown'}), with its env")
    commands = []
    for lines in _processes(case):
        if _needs_opening(case.revision, lines):
            lines = opening(case.revision, version) + lines
            notes.append(
                f"the first two lines open the {case.revision} session as the harness does (initialize, "
                "then notifications/initialized); the others are the case's own"
            )
        commands.append(f"{_printf(lines)} | {command}")
    if len(commands) > 1:
        notes.append(f"the case used {len(commands)} server processes: one command each, in order")
    return commands, notes


def _printf(lines: Sequence[str]) -> str:
    """`printf` writing each line and a newline: its lines as arguments when they are plain text, else
    one format of octal escapes, which writes any bytes (a line that is not UTF-8, a control)."""
    if all(line.isprintable() for line in lines):
        return "printf '%s\\n' " + " ".join(shlex.quote(line) for line in lines)
    data = b"".join(line.encode("utf-8", "surrogateescape") + b"\n" for line in lines)
    plain = {c for c in range(0x20, 0x7F)} - {ord("%"), ord("\\"), ord("'")}
    form = "".join(chr(b) if b in plain else f"\\{b:03o}" for b in data)
    return f"printf '{form}'"


# --- HTTP ----------------------------------------------------------------------------------------


def _http(
    case: Case, target: Target | None, sends: Sequence[Mapping[str, Any]], version: str
) -> tuple[list[str], list[str]]:
    notes = []
    commands = []
    texts = [_text(entry) for entry in sends]
    has_session = any(SESSION_HEADER in {k.lower() for k in (entry.get("headers") or {})} for entry in sends)
    # Requests that are no MCP (an authorization server's metadata, token and registration requests)
    # need no session opened before them.
    speaks_mcp = has_session or any(
        _method(text) or _streams(entry) for entry, text in zip(sends, texts, strict=True)
    )
    if speaks_mcp and _needs_opening(case.revision, texts):
        url = _url_of(sends[0], target)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        init, initialized = opening(case.revision, version)
        commands.append(_curl("POST", url, headers, init))
        commands.append(_curl("POST", url, {**headers, "Mcp-Session-Id": "x"}, initialized))
        notes.append(
            f"the first two requests open the {case.revision} session as the harness does; the others "
            "are the case's own"
        )
        has_session = True
    if has_session:
        notes.append(
            f"set {SESSION_VARIABLE} to the Mcp-Session-Id header of the answer to initialize (the "
            "harness's session ended with its run)"
        )
    if case.transport == "sse":
        notes.append("over HTTP+SSE the answers come on the GET stream: keep `curl -N URL` open beside")
    for entry, text in zip(sends, texts, strict=True):
        verb, _, url = str(entry.get("channel") or "POST").partition(" ")
        commands.append(_curl(verb, url or _url_of(entry, target), entry.get("headers") or {}, text))
    return commands, notes


def _streams(entry: Mapping[str, Any]) -> bool:
    """Whether a request accepts an event stream, as every MCP request over HTTP does."""
    headers = entry.get("headers") or {}
    return any(k.lower() == "accept" and "text/event-stream" in str(v) for k, v in headers.items())


def _url_of(entry: Mapping[str, Any], target: Target | None) -> str:
    channel = str(entry.get("channel") or "")
    _, _, url = channel.partition(" ")
    return url or (target.url if target is not None and target.url else "URL")


def _curl(verb: str, url: str, headers: Mapping[str, Any], body: str) -> str:
    """One request as `curl`: `-i` shows the status line and headers the checks judge; a GET holds
    its event stream open (`-N`) for 5 s at most."""
    parts = ["curl -sS -i"]
    parts.append("-N --max-time 5" if verb == "GET" else f"-X {verb}")
    parts.append(shlex.quote(url))
    for name, value in headers.items():
        if name.lower() == SESSION_HEADER:
            parts.append(f'-H "{name}: ${SESSION_VARIABLE}"')
        else:
            parts.append("-H " + shlex.quote(f"{name}: {value}"))
    if body:
        parts.append("--data-binary " + shlex.quote(body))
    return " ".join(parts)
