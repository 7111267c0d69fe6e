"""The client side of input requests: what a client declares, and how it answers the server's asks.

A server needs input from its client in two forms. In the legacy era it sends JSON-RPC requests
(`sampling/createMessage`, `elicitation/create`, `roots/list`) while it handles one of ours; in
2026-07-28 it answers with an `InputRequiredResult` whose `inputRequests` the client fulfils and
retries with (multi round-trip requests, MRTR). Either way the server may only ask for what the client
declared ("Both parties MUST ... Only use capabilities that were successfully negotiated"). This module
decides, for one declared capability set, whether an ask was declared and what answers it; it never
judges a server (the checks do, from `ServerAsk` records).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from conformance.protocol import jsonrpc

SAMPLING: Final = "sampling/createMessage"
ELICITATION: Final = "elicitation/create"
ROOTS: Final = "roots/list"
INPUT_METHODS: Final = (SAMPLING, ELICITATION, ROOTS)

#: The capability names a run may declare (`--client-capabilities`, the target file's [client] table).
FEATURES: Final = ("sampling", "sampling.tools", "elicitation.form", "elicitation.url", "roots")
#: What a run declares unless told otherwise: sampling, form elicitation and roots, with tool-enabled
#: sampling and URL elicitation left undeclared, so a server that uses them regardless is seen.
DEFAULT_FEATURES: Final = frozenset({"sampling", "elicitation.form", "roots"})
#: Elicitation exists from 2025-06-18 on, its modes and tool-enabled sampling from 2025-11-25 on.
FIRST_ELICITATION: Final = "2025-06-18"
FIRST_INPUT_MODES: Final = "2025-11-25"

#: What a declared ask gets when the target file names no answer: valid results of each method.
DEFAULT_ANSWERS: Final[dict[str, dict[str, Any]]] = {
    SAMPLING: {
        "role": "assistant",
        "content": {"type": "text", "text": "A canned answer from the mcp-conformance harness."},
        "model": "mcp-conformance-canned",
        "stopReason": "endTurn",
    },
    ELICITATION: {"action": "decline"},
    ROOTS: {"roots": []},
}


def parse_features(text: str) -> frozenset[str]:
    """`all`, `none` or a comma list of FEATURES; ValueError with a one-line reason otherwise."""
    text = text.strip()
    if text == "all":
        return frozenset(FEATURES)
    if text in ("none", ""):
        return frozenset()
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown client capability {unknown[0]!r}; known: all, none, {', '.join(FEATURES)}")
    return frozenset(names)


def capabilities_for(features: frozenset[str], revision: str) -> dict[str, Any]:
    """The `capabilities` object declaring `features`, as `revision` spells it (each only where it exists)."""
    caps: dict[str, Any] = {}
    modes = revision >= FIRST_INPUT_MODES
    if "sampling" in features or ("sampling.tools" in features and modes):
        caps["sampling"] = {"tools": {}} if "sampling.tools" in features and modes else {}
    if revision >= FIRST_ELICITATION and features & {"elicitation.form", "elicitation.url"}:
        if modes:
            caps["elicitation"] = {m: {} for m in ("form", "url") if f"elicitation.{m}" in features}
        elif "elicitation.form" in features:
            caps["elicitation"] = {}
    if "roots" in features:
        caps["roots"] = {"listChanged": True}
    return caps


def undeclared(method: Any, params: Any, capabilities: dict[str, Any]) -> tuple[str, int] | None:
    """Why an ask of `method` is not covered by `capabilities`, with the error code a client answers
    it with, or None when it is declared. An elicitation mode the client did not declare is -32602
    (2025-11-25 elicitation, Error Handling: "Server sends an elicitation/create request with a mode not
    declared in client capabilities: -32602"); a method of an undeclared capability is -32601."""
    params = params if isinstance(params, dict) else {}
    if method == SAMPLING:
        sampling = capabilities.get("sampling")
        if not isinstance(sampling, dict):
            return "sampling/createMessage, but the client did not declare sampling", jsonrpc.METHOD_NOT_FOUND
        if "tools" in params and not isinstance(sampling.get("tools"), dict):
            return (
                "tool-enabled sampling/createMessage (params.tools), "
                "but the client did not declare sampling.tools",
                jsonrpc.METHOD_NOT_FOUND,
            )
        return None
    if method == ELICITATION:
        elicitation = capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return "elicitation/create, but the client did not declare elicitation", jsonrpc.METHOD_NOT_FOUND
        mode = params.get("mode", "form")
        # "an empty capabilities object is equivalent to declaring support for form mode only"
        modes = set(elicitation) & {"form", "url"} or {"form"}
        if mode not in modes:
            return (
                f"elicitation/create in mode {mode!r}, but the client declared only {sorted(modes)}",
                jsonrpc.INVALID_PARAMS,
            )
        return None
    if method == ROOTS:
        if not isinstance(capabilities.get("roots"), dict):
            return "roots/list, but the client did not declare roots", jsonrpc.METHOD_NOT_FOUND
        return None
    if method == "ping":
        return None
    return f"{method!r} is not a request a client serves", jsonrpc.METHOD_NOT_FOUND


@dataclass
class ServerAsk:
    """One ask the server made of the client: a legacy request on the wire or an MRTR `inputRequests`
    entry. `problem` says why it was not declared (empty: it was); `answer` is what the client sent."""

    method: Any
    params: Any
    problem: str = ""
    answer: Any = None
    #: Where it came from: "request" (a JSON-RPC request on the wire) or "inputRequests".
    via: str = "request"
    #: The legacy request's id, or the inputRequests key.
    key: Any = None
    raw: str = ""


@dataclass
class ClientInput:
    """A declared capability set and its canned answers, and every ask answered under them."""

    capabilities: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    asks: list[ServerAsk] = field(default_factory=list)
    #: 2026-07-28 forbids JSON-RPC requests from the server altogether (MRTR replaces them).
    modern: bool = False

    def result_for(self, method: str) -> Any:
        return self.answers.get(method, DEFAULT_ANSWERS.get(method, {}))

    def answer_frame(self, frame: jsonrpc.Frame) -> bytes:
        """The response to a server's JSON-RPC request: a canned result when declared, else an error."""
        value = frame.value if isinstance(frame.value, dict) else {}
        method, params, msg_id = value.get("method"), value.get("params"), value.get("id")
        ask = ServerAsk(method, params, key=msg_id, raw=frame.text[:4000])
        refusal = undeclared(method, params, self.capabilities)
        if self.modern and method in INPUT_METHODS:
            refusal = (
                f"{method} as a JSON-RPC request, which 2026-07-28 replaced by InputRequiredResult",
                jsonrpc.METHOD_NOT_FOUND,
            )
        if refusal is None:
            ask.answer = {} if method == "ping" else self.result_for(str(method))
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": ask.answer}
        else:
            ask.problem, code = refusal
            ask.answer = {"code": code, "message": f"not declared by this client: {ask.problem}"}
            message = {"jsonrpc": "2.0", "id": msg_id, "error": ask.answer}
        self.asks.append(ask)
        return jsonrpc.encode(message)

    def fulfil(self, input_requests: dict[str, Any]) -> dict[str, Any]:
        """`inputResponses` for a 2026-07-28 `inputRequests` map; each ask recorded. An undeclared ask
        gets no response (there is no error slot in `InputResponses`)."""
        responses: dict[str, Any] = {}
        for key, request in input_requests.items():
            request = request if isinstance(request, dict) else {}
            method, params = request.get("method"), request.get("params")
            ask = ServerAsk(method, params, via="inputRequests", key=key)
            refusal = (
                undeclared(method, params, self.capabilities)
                if method in INPUT_METHODS
                else (
                    f"{method!r} is not an input request "
                    "(elicitation/create, sampling/createMessage, roots/list)",
                    0,
                )
            )
            if refusal is None:
                ask.answer = responses[key] = self.result_for(str(method))
            else:
                ask.problem = refusal[0]
            self.asks.append(ask)
        return responses
