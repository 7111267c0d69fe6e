"""The client's answer to a form elicitation whose fields all have defaults (SEP-1034)."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import ClientContext, blocked, client_check, missed, weak
from conformance_packs.client.common import shape, shown

SCENARIO = "elicitation-sep1034-client-defaults"
#: field -> the JSON type its default has, as the scenario's form gives it.
EXPECTED = {"name": str, "age": int, "score": int | float, "status": str, "verified": bool}
ENUM = ("active", "inactive", "pending")


def _answer(ctx: ClientContext) -> dict[str, Any]:
    """The client's answer to the scenario's elicitation/create (its whole message)."""
    answers = ctx.recording.responses()
    if not answers:
        ctx.needs("tools/call", "call the tool that asks for the form")
        ctx.unless_failed("the client did not answer elicitation/create")
        missed("the client called the tool but never answered the server's elicitation/create")
    value: dict[str, Any] = answers[0].value
    return value


@client_check(
    "client.elicitation.result-shape",
    "CLIENT-ELICIT-002",
    "the answer to elicitation/create is an ElicitResult",
    scenario=SCENARIO,
    revisions=("2025-11-25",),
)
async def result_shape(ctx: ClientContext) -> None:
    answer = _answer(ctx)
    if "error" in answer:  # judged as an error, never as a result
        error = answer["error"]
        if not (isinstance(error, dict) and isinstance(error.get("code"), int) and "message" in error):
            missed(
                f"the client answered elicitation/create with a malformed error: {error!r}", response=answer
            )
        weak(
            f"the client answered the form with an error, not an ElicitResult: {error!r}. The user's own "
            "choices are accept, decline and cancel, but the text lets a client answer a failure with a "
            "JSON-RPC error, so no MUST is broken (the official check fails this)",
            response=answer,
        )
    problems = shape("elicitResult", answer.get("result"))
    if problems:
        missed("the elicitation result does not match the schema: " + "; ".join(problems), response=answer)


def _wrong(content: dict[str, Any]) -> list[str]:
    wrong = []
    for field, kind in EXPECTED.items():
        value = content.get(field)
        if field not in content:
            wrong.append(f"{field} missing")
        elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            wrong.append(f"{field} is {shown(value)}")
    if content.get("status") not in ENUM and "status" in content:
        wrong.append(f"status {shown(content.get('status'))} is none of {', '.join(ENUM)}")
    return wrong


@client_check(
    "client.elicitation.defaults",
    "CLIENT-ELICIT-001",
    "an accepted form carries the defaults of the fields left alone",
    scenario=SCENARIO,
    revisions=("2025-11-25",),
)
async def defaults_applied(ctx: ClientContext) -> None:
    answer = _answer(ctx)
    result = answer.get("result")
    if "error" in answer or shape("elicitResult", result):
        blocked("client.elicitation.result-shape", "the answer is no ElicitResult")
    if not isinstance(result, dict) or result.get("action") != "accept":
        missed(f"the client did not accept the form (answer: {answer})", response=answer)
    content = result.get("content")
    wrong = _wrong(content if isinstance(content, dict) else {})
    if wrong:
        missed("the accepted form lacks defaults: " + "; ".join(wrong), response=answer)
