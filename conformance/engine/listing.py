"""One paginated listing (`tools/list`, `resources/list`, ...) per (target, revision), under one rule.

Every pack reads the same listing: it is fetched once per revision, whoever asks first, and cached with
the wire entries it rests on, so a later case can show them. The rule: follow `nextCursor` until it is
absent, for at most `RunOptions.list_page_cap` pages; a cursor that is not a string or that repeats ends
the listing with a problem (it would never end), and so does a page answered without a result object.
The base suite judges the problem (its pagination rows); the profiles use the items and read what they
need.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import TransportError
from conformance.adapters.transcript import Transcript
from conformance.engine.memo import CURRENT_KEY, Failed
from conformance.protocol.session import Call


@dataclass(frozen=True)
class Listing:
    """What one paginated list method gave: its items (as sent), the calls, and what went wrong."""

    items: list[Any]
    calls: list[Call]
    #: Why the listing is incomplete ("" when it ended normally): a repeated or non-string cursor, the
    #: page cap hit, or a page without a result object.
    problem: str
    #: The wire entries of the pages, for the evidence of cases that rest on a listing fetched earlier.
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def refusal(self) -> Call | None:
        """The page answered with a JSON-RPC error instead of a result, if one was: an error answer is
        judged as an error (what the server refused, and whether a row says it may not), never validated
        as a result."""
        last = self.calls[-1] if self.calls else None
        if last is not None and last.error is not None and not isinstance(last.result, dict):
            return last
        return None

    def objects(self) -> list[dict[str, Any]]:
        """The items that are JSON objects (what a profile can read)."""
        return [item for item in self.items if isinstance(item, dict)]


async def fetch_listing(
    request: Callable[[str, dict[str, Any] | None], Awaitable[Call]],
    transcript: Transcript,
    method: str,
    key: str,
    page_cap: int,
) -> Listing:
    """Follow `nextCursor` to the end under the one rule; a transport failure propagates."""
    mark = transcript.mark()
    items: list[Any] = []
    calls: list[Call] = []
    problem = ""
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(page_cap):
        call = await request(method, {"cursor": cursor} if cursor is not None else None)
        calls.append(call)
        result = call.result
        if not isinstance(result, dict):
            problem = (
                f"{method} was answered with an error ({call.drew()}), not a result"
                if call.error is not None
                else f"{method} was not answered with a result ({call.drew()})"
            )
            break
        page = result.get(key)
        if isinstance(page, list):
            items.extend(page)
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        if not isinstance(cursor, str) or cursor in seen:
            problem = f"nextCursor {cursor!r} repeats or is not a string: the listing never ends"
            break
        seen.add(cursor)
    else:
        problem = f"more than {page_cap} pages: the listing does not end"
    return Listing(items, calls, problem, transcript.since(mark))


async def cached_listing(
    store: dict[str, Any],
    request: Callable[[str, dict[str, Any] | None], Awaitable[Call]],
    transcript: Transcript,
    method: str,
    key: str,
    page_cap: int,
) -> tuple[Listing, bool]:
    """The listing from `store`, fetched now if absent; (listing, whether it was fetched earlier).

    A listing whose page broke the transport is remembered as that failure, with the case that met
    it, so the later cases that need it are SKIP at once, blocked by that case, instead of each
    waiting out the same timeout.
    """
    cache_key = f"engine:list:{method}"
    cached = store.get(cache_key)
    if isinstance(cached, Failed):
        cached.reraise()
    if isinstance(cached, Listing):
        return cached, True
    pages: list[Call] = []

    async def counted(method: str, params: dict[str, Any] | None) -> Call:
        call = await request(method, params)
        pages.append(call)
        return call

    try:
        listing = await fetch_listing(counted, transcript, method, key, page_cap)
    except TransportError as exc:
        store[cache_key] = Failed(f"{method} page {len(pages) + 1}", exc, CURRENT_KEY.get())
        raise
    store[cache_key] = listing
    return listing, False
