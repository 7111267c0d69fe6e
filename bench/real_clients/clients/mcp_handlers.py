"""The user's side of a session, for the two programs on the Python `mcp` SDK (1.x and 2.x, whose
`mcp.types` names these alike): a stub model for sampling, one root folder, and a form accepted. Written
once, beside `mcp_oauth.py`; what is not the SDK at all is `contract.py`'s."""

from __future__ import annotations

from typing import Any

from contract import ROOTS, SAMPLED, form_content
from mcp import types


async def sample(_context: Any, _params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    """The user's model (a stub): the same assistant message for every request."""
    return types.CreateMessageResult.model_validate(SAMPLED)


async def list_roots(_context: Any) -> types.ListRootsResult:
    """The user's one root folder."""
    return types.ListRootsResult.model_validate({"roots": ROOTS})


async def accept_form(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The user accepts the form, filling in only its required fields without a default (the defaults
    are the SDK's); a URL-mode request (the page opened out of band) is accepted without content, as
    the schema wants."""
    if getattr(params, "mode", None) == "url":
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="accept", content=form_content(params))
