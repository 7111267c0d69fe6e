"""The case context's shared primitives: one listing rule, one call policy, the memo, the section."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.base import Transcript, TransportTimeout
from conformance.engine import policy
from conformance.engine.listing import cached_listing, fetch_listing
from conformance.engine.memo import remember
from conformance.engine.sections import Section


def pages(*results: Any) -> tuple[list[Any], Any]:
    """A fake request that answers `results` in turn, and the list of params it was sent."""
    sent: list[Any] = []
    answers = iter(results)

    async def request(method: str, params: dict[str, Any] | None) -> Any:
        sent.append(params)
        return SimpleNamespace(result=next(answers))

    return sent, request


def listing(*results: Any, cap: int = 1000) -> Any:
    _, request = pages(*results)
    return asyncio.run(fetch_listing(request, Transcript(), "tools/list", "tools", cap))


def test_listing_follows_cursors_to_the_end() -> None:
    sent, request = pages({"tools": [1], "nextCursor": "a"}, {"tools": [2]})
    found = asyncio.run(fetch_listing(request, Transcript(), "tools/list", "tools", 1000))
    assert (found.items, found.problem, sent) == ([1, 2], "", [None, {"cursor": "a"}])


@pytest.mark.parametrize("cursor", ["a", 7])
def test_a_repeated_or_non_string_cursor_is_the_one_problem(cursor: Any) -> None:
    found = listing({"tools": [1], "nextCursor": "a"}, {"tools": [2], "nextCursor": cursor})
    assert found.items == [1, 2]
    assert "repeats or is not a string" in found.problem


def test_the_page_cap_ends_a_listing_with_a_problem() -> None:
    found = listing(*({"tools": [n], "nextCursor": str(n)} for n in range(5)), cap=3)
    assert found.items == [0, 1, 2]
    assert found.problem == "more than 3 pages: the listing does not end"


def test_a_page_without_a_result_is_a_problem_and_objects_filter() -> None:
    found = listing({"tools": [{"name": "x"}, "junk"], "nextCursor": "a"}, None)
    assert found.objects() == [{"name": "x"}]
    assert found.problem == "tools/list was not answered with a result"


def test_a_listing_is_fetched_once_and_a_failure_is_remembered() -> None:
    store: dict[str, Any] = {}
    sent, request = pages({"tools": [1]})
    first, earlier = asyncio.run(cached_listing(store, request, Transcript(), "tools/list", "tools", 10))
    again, earlier_again = asyncio.run(
        cached_listing(store, request, Transcript(), "tools/list", "tools", 10)
    )
    assert (earlier, earlier_again, again is first, len(sent)) == (False, True, True, 1)

    async def hangs(method: str, params: Any) -> Any:
        raise TransportTimeout("no answer")

    with pytest.raises(TransportTimeout):
        asyncio.run(cached_listing(store, hangs, Transcript(), "resources/list", "resources", 10))
    with pytest.raises(TransportTimeout, match="already failed"):
        asyncio.run(cached_listing(store, request, Transcript(), "resources/list", "resources", 10))


def test_memo_computes_once() -> None:
    store: dict[str, Any] = {}
    calls: list[int] = []

    async def factory() -> int:
        calls.append(1)
        return 42

    assert asyncio.run(remember(store, "k", "owner", factory)) == 42
    assert asyncio.run(remember(store, "k", "owner", factory)) == 42
    assert calls == [1]


def test_one_call_tools_policy() -> None:
    safe = {"name": "a", "annotations": {"readOnlyHint": True}}
    unsafe = {"name": "b", "annotations": {"readOnlyHint": False}}
    bare = {"name": "c"}
    listed = [safe, unsafe, bare]
    assert policy.callable_tools("safe", listed) == [safe]
    assert policy.callable_tools("all", listed) == listed
    assert policy.callable_tools("none", listed) == []


def test_an_exclusive_section_runs_alone() -> None:
    async def scenario() -> list[str]:
        section, log = Section(), []

        async def reader(name: str) -> None:
            async with section.hold(exclusive=False):
                log.append(f"{name}+")
                await asyncio.sleep(0.02)
                log.append(f"{name}-")

        async def writer() -> None:
            await asyncio.sleep(0.005)
            async with section.hold(exclusive=True):
                log.append("W+")
                await asyncio.sleep(0.01)
                log.append("W-")

        async def late_reader() -> None:
            await asyncio.sleep(0.01)  # arrives while the writer waits: it goes after the writer
            await reader("late")

        await asyncio.gather(reader("r1"), reader("r2"), writer(), late_reader())
        return log

    log = asyncio.run(scenario())
    w = log.index("W+")
    assert log[w + 1] == "W-"
    assert {"r1-", "r2-"} <= set(log[:w])
    assert log.index("late+") > w
