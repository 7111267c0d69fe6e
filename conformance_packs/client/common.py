"""What the client pack's checks share: its message schemas and reading a message's members."""

from __future__ import annotations

import json
from typing import Any

from conformance.pack_api import ClientContext, Message, era_of, schema_errors, weak

MESSAGES_ID = "urn:mcp-conformance:client-messages:1"


def shape(definition: str, instance: Any) -> list[str]:
    """`instance` against the client-messages schema's `definition` (the published schemas' shape)."""
    return schema_errors(MESSAGES_ID, definition, instance)


def params_of(value: Any) -> dict[str, Any]:
    params = value.get("params") if isinstance(value, dict) else None
    return params if isinstance(params, dict) else {}


#: What a 2026-07-28 row says of a client that opened with the earlier revisions' handshake.
NOT_MODERN = (
    "the client opened with initialize, the handshake of the revisions before 2026-07-28, and did not "
    "run the scenario: it does not speak 2026-07-28, and its requests are none of that revision's"
)


def negotiated(ctx: ClientContext, opened: list[Message]) -> object:
    """The version initialize agreed on: what the scenario's server answered (the revision it plays),
    else, when it recorded none, what the client offered."""
    return ctx.recording.facts.get("protocol_version", params_of(opened[0].value).get("protocolVersion"))


def declined(offered: object, revision: str) -> str:
    """Why a client that offered another revision than the scenario's and then gave up was not judged:
    the scenario's server answered with the revision it plays, and a client that does not support the
    version the server answers SHOULD disconnect (the lifecycle's version negotiation)."""
    return (
        f"the client offered {offered!r}, the scenario's server answered {revision} (the only revision it "
        f"supports), and the client gave up: it may not support {revision}, and a client that does not "
        "support the server's version SHOULD disconnect; the scenario was not acted out at this revision"
    )


def speaks_modern(ctx: ClientContext) -> None:
    """One defect, one verdict: at 2026-07-28, a client that sent `initialize` (which the revision has
    not) and then failed the contract case does not speak the revision; the rows about its 2026-07-28
    requests are SKIP blocked by the contract case, not one FAIL each for the same cause. A client
    that sent it and still ran to its end is judged by what it sent."""
    if era_of(ctx.revision) == "modern" and ctx.requests("initialize"):
        ctx.unless_failed(NOT_MODERN)


def sent(ctx: ClientContext, *, requests_only: bool) -> list[Message]:
    """The client's requests (and, unless `requests_only`, notifications). None at all is SKIP blocked
    by the contract case when the client failed it, else WARN: nothing the row is about was sent.
    A client that does not speak 2026-07-28 is blocked too (`speaks_modern`)."""
    speaks_modern(ctx)
    found = [m for m in ctx.recording.messages() if (m.is_request if requests_only else m.method is not None)]
    if not found:
        ctx.unless_failed("the client sent no request")
        weak("the client sent no request at all, though the scenario asks it to")
    return found


def shown(value: Any) -> str:
    """A value in a message as JSON (`null`, `"text"`, `[5, 3]`), never a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)
