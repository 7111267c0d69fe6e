"""The messages a server sent in one revision, read back from the wire log, each with its method.

Why: the rules about *every* message (its shape, the capabilities it may use, its error codes) are
judged over everything the revision's cases exchanged, not over a sample. A response carries no method,
so it is matched to the request the harness sent with its id; sessions of one revision share the log
and each numbers its requests from 1, so when requests with one id but different methods are pending,
the response's method is unknown and only its envelope is judged.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.pack_api import jsonrpc

if TYPE_CHECKING:
    from conformance.pack_api import CaseContext

#: Where `read_log` keeps the parsed messages of a revision.
CACHE_KEY = "surface:server-messages"

#: Channels on which a server's JSON-RPC messages arrive: stdio lines, HTTP bodies, SSE `message` events.
MESSAGE_CHANNELS = ("stdout", "body", "sse:message", "sse:")


@dataclass(frozen=True, slots=True)
class Seen:
    """One message the server sent: where in the log, what it was, and which method it belongs to.

    Only a response keeps its parsed value (there are as many as the harness sent requests); any other
    message is parsed again from its entry's text when read, so a server's flood of notifications costs
    the log's text once, not a parsed copy of every message held for the whole revision.
    """

    #: Index of its entry in the revision's wire log (the entry can be shown as evidence).
    entry: int
    #: Where it sits in its entry: "" for a single message, "/N" for the Nth member of a batch.
    pointer: str
    #: "request", "notification", "response" (a result or an error, its id absent or null included) or
    #: "invalid" (no JSON-RPC message of any kind).
    kind: str
    #: The message's method, or for a response the method of the request it answers (None: unknown).
    method: str | None
    #: For a response, the params of the request it answers (None when unknown or absent).
    params: Any = None
    #: For a response over HTTP, the status of the HTTP answer that carried it.
    status: int | None = None
    #: A response's parsed value; for any other message, None and `text` is parsed on each read.
    parsed: Any = None
    text: str | None = None

    @property
    def message(self) -> Any:
        if self.text is None:
            return self.parsed
        value = json.loads(self.text)
        return value[int(self.pointer[1:])] if self.pointer else value


def _decode(entry: dict[str, Any]) -> Any:
    """The JSON value of an entry's text, or None when it has none, was cut short, or is not JSON."""
    text = entry.get("text")
    if not isinstance(text, str) or "truncated_from" in entry:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _carries_messages(entry: dict[str, Any]) -> bool:
    return entry.get("channel", "") in MESSAGE_CHANNELS


def _kind(message: Any) -> str:
    if not isinstance(message, dict):
        return "invalid"
    if isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    if jsonrpc.idless_reply(message):
        # A reply without an id (2025-11-25 on, an error may omit it) is a response still: to a
        # notification, or to a message whose id could not be read; it answers no request sent.
        return "response"
    return "invalid"


def _id_key(value: Any) -> str:
    """An id as a dict key that keeps 1 and "1" apart (JSON-RPC ids match in value and type)."""
    return json.dumps(value, sort_keys=True)


def server_messages(entries: list[dict[str, Any]]) -> list[Seen]:
    """Every JSON-RPC message the server sent in `entries` (a revision's wire log), in order.

    Lines that are not JSON are stdout hygiene's to judge and HTTP bodies that are not JSON the HTTP
    rows', so both are left out here; so are entries the log cut short, and JSON that is no JSON-RPC
    message in the body of an HTTP error status (an HTTP error, not an MCP message).
    """
    pending: dict[str, deque[tuple[str, Any]]] = defaultdict(deque)
    seen: list[Seen] = []
    status: int | None = None
    for index, entry in enumerate(entries):
        direction = entry.get("dir")
        if direction == "send":
            value = _decode(entry)
            for message in value if isinstance(value, list) else [value]:
                if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
                    pending[_id_key(message["id"])].append((message["method"], message.get("params")))
            continue
        if direction != "recv":
            continue
        if isinstance(entry.get("status"), int):
            status = entry["status"]
        if not _carries_messages(entry):
            continue
        value = _decode(entry)
        if value is None:
            continue
        batch = isinstance(value, list)
        for position, message in enumerate(value if batch else [value]):
            kind = _kind(message)
            if kind == "invalid" and entry.get("channel") == "body" and (status or 0) >= 400:
                # An HTTP error's body "MAY comprise a JSON-RPC error response": other JSON is no message.
                continue
            method, params = None, None
            if kind in ("request", "notification"):
                method = message["method"]
            elif kind == "response":
                waiting = pending.get(_id_key(message.get("id")))  # none is sent with id null
                if waiting:
                    methods = {m for m, _ in waiting}
                    answered, params = waiting.popleft()
                    method = answered if len(methods) == 1 else None
            pointer = f"/{position}" if batch else ""
            if kind == "response":
                seen.append(Seen(index, pointer, kind, method, params, status, parsed=message))
            else:
                seen.append(Seen(index, pointer, kind, method, params, status, text=entry["text"]))
    return seen


def read_log(ctx: CaseContext) -> tuple[list[dict[str, Any]], list[Seen]]:
    """The revision's wire log and the server's messages in it, parsed once for the checks that run
    after the others (the log does not grow while they read it)."""
    entries = ctx.wire_log()
    cached = ctx.shared.get(CACHE_KEY)
    if cached is not None and cached[0] == len(entries):
        return entries, cached[1]
    seen = server_messages(entries)
    ctx.shared[CACHE_KEY] = (len(entries), seen)
    return entries, seen


def excerpt(entries: list[dict[str, Any]], seen: Seen) -> dict[str, Any]:
    """Evidence for one message: its wire entry as recorded."""
    return {"wire_entry": entries[seen.entry]}


#: The most wire entries `drawn_by` attaches to a case: what the harness sent, what came between, the
#: message it judges.
CAUSE_ENTRIES = 12


def drawn_by(ctx: CaseContext, entries: list[dict[str, Any]], index: int) -> dict[str, Any]:
    """Evidence of what drew the server's entry at `index` of the revision's wire log, by the log's
    order, whichever case sent it, not the judging case's own exchange, which came later: the first
    thing the harness sent after the server's last answer before it (a request, with its answer; a
    notification; a line that is no message at all), since a server that reads in order was working on
    that one (a probe's malformed line is followed by a ping at once); when everything sent had been
    answered, the last thing sent. What else was sent meanwhile is listed (`also_sent`), and the entries
    from the first to `index` are attached, so the case's transcript shows them in order. It is the
    evidence's `request` (so the runner adds no exchange of the case's own in its place)."""
    sends = _pending(entries, index)
    if not sends:
        ctx.attach(entries[: index + 1][-CAUSE_ENTRIES:])
        return {"request": "(nothing: it came before the harness sent anything)", "response": "(none)"}
    first = sends[0]
    ctx.attach(entries[first : index + 1][-CAUSE_ENTRIES:])
    evidence = _exchange_from(entries, first)
    if len(sends) > 1:
        evidence["also_sent"] = [_sent_text(entries[i]) for i in sends[1:CAUSE_ENTRIES]]
    return evidence


def _pending(entries: list[dict[str, Any]], index: int) -> list[int]:
    """The indexes of what the harness sent after the server's last answer before `index` (or, when it
    sent nothing since, of the last thing it sent)."""
    sends: list[int] = []
    for i in range(index - 1, -1, -1):
        entry = entries[i]
        if entry.get("dir") == "send":
            sends.append(i)
        elif entry.get("dir") == "recv" and _kind(_decode(entry)) == "response" and sends:
            break
        elif entry.get("dir") == "recv" and _kind(_decode(entry)) == "response":
            last = next((j for j in range(i - 1, -1, -1) if entries[j].get("dir") == "send"), None)
            return [] if last is None else [last]
    return sorted(sends)


def _sent_text(entry: dict[str, Any]) -> str:
    text = entry.get("text")
    return text if isinstance(text, str) else f"{entry.get('channel', '')} (no body)"


def _exchange_from(entries: list[dict[str, Any]], sent: int) -> dict[str, Any]:
    """The entry sent at `sent` as evidence, with the answer it drew when it is a request."""
    text = _sent_text(entries[sent])
    value = _decode(entries[sent])
    if not (isinstance(value, dict) and isinstance(value.get("method"), str) and "id" in value):
        return {"request": text, "response": "(none expected: what was sent is no request)"}
    key = _id_key(value["id"])
    answer = next(
        (e["text"] for e in entries[sent + 1 :] if e.get("dir") == "recv" and _answers(e, key)),
        "(no response)",
    )
    return {"request": text, "response": answer}


def _answers(entry: dict[str, Any], key: str) -> bool:
    value = _decode(entry)
    return isinstance(value, dict) and "method" not in value and "id" in value and _id_key(value["id"]) == key
