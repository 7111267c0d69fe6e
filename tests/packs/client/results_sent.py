"""The results a scenario server sent in a client run, read back from the run's transcripts and judged
against the revision's shapes (`conformance.schemas.shape_errors`): a result a strict SDK client would
reject (a 2026-07-28 listing without `ttlMs`) is a harness bug that makes every verdict of that run false.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.schemas import shape_errors

#: The shape each method's result has in the core's MCP shapes; a method not named here is judged
#: by the shape every result has (a 2026-07-28 result's `resultType`).
SHAPES = {
    "initialize": "initializeResult",
    "server/discover": "discoverResult",
    "tools/list": "listToolsResult",
    "tools/call": "callToolResult",
    "resources/list": "listResourcesResult",
    "resources/templates/list": "listResourceTemplatesResult",
    "resources/read": "readResourceResult",
    # no prompt shapes in the core: a listing is at least cacheable, like every 2026-07-28 listing
    "prompts/list": "modern:cacheable",
}


def _messages(text: str) -> Iterator[Any]:
    """The JSON-RPC messages of one transcript entry: a JSON body, a line, or an event stream."""
    text = text.strip()
    chunks = [text] if text[:1] in "[{" else [line[5:] for line in text.splitlines() if line[:5] == "data:"]
    for chunk in (c.strip() for c in chunks):
        try:
            value = json.loads(chunk) if chunk else None
        except ValueError:
            continue
        yield from value if isinstance(value, list) else [value]


def results_sent(transcript: list[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
    """(method, result) for every result the scenario server sent, paired with the client's request
    by its ID (the latest request with that ID before the answer)."""
    asked: dict[Any, str] = {}
    for entry in transcript:
        for message in _messages(str(entry.get("text") or "")):
            if not isinstance(message, dict):
                continue
            if entry["dir"] == "recv" and "method" in message and "id" in message:
                asked[json.dumps(message["id"])] = str(message["method"])
            elif entry["dir"] == "send" and "result" in message:
                yield asked.get(json.dumps(message.get("id")), "(unknown)"), message["result"]


def _earlier_server_on_purpose(case: dict[str, Any], result: Any) -> bool:
    """The one result sent invalid on purpose: SEP-2322's scenario answers test_mrtr_no_result_type as
    an earlier revision's server would, without `resultType` (CLIENT-MRTR-005 judges the client's
    reading of it as complete)."""
    scenario = case["evidence"].get("scenario")
    return (
        scenario == "sep-2322-client-request-state"
        and isinstance(result, dict)
        and "resultType" not in result
    )


def invalid_results(cases: list[dict[str, Any]]) -> list[tuple[str, str, str, list[str]]]:
    """(case, method, shape, problems) for every result of these runs its revision's shape refuses; each
    scenario run is read once, through its contract case (CLIENT-RUN-001), which every run has."""
    found = []
    for case in (c for c in cases if c["requirement"] == "CLIENT-RUN-001"):
        for method, result in results_sent(case["transcript"]):
            if _earlier_server_on_purpose(case, result):
                continue
            modern_input = isinstance(result, dict) and result.get("resultType") == "input_required"
            shape = "modern:result" if modern_input else SHAPES.get(method, "result")
            problems = shape_errors(shape, result, case["revision"])
            if problems:
                found.append((case["key"], method, shape, problems))
    return found
