"""The case context's shared primitives: one listing rule, one call policy, the memo, the section."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.adapters.base import Reply, TransportTimeout, TransportTooLarge
from conformance.adapters.transcript import Transcript
from conformance.engine import policy
from conformance.engine.listing import cached_listing, fetch_listing
from conformance.engine.memo import remember
from conformance.engine.sections import Section
from conformance.protocol.jsonrpc import classify, encode
from conformance.protocol.session import Call


def pages(*results: Any) -> tuple[list[Any], Any]:
    """A request that answers `results` in turn (a result each; an `Error` is an error answer; None no
    answer at all), as a real `Call` with the answer's bytes, and the list of params it was sent."""
    sent: list[Any] = []
    answers = iter(results)

    async def request(method: str, params: dict[str, Any] | None) -> Call:
        sent.append(params)
        answer = next(answers)
        if answer is None:
            return Call(None, Reply(None))
        member = {"error": answer.error} if isinstance(answer, Error) else {"result": answer}
        return Call(None, Reply(classify(encode({"jsonrpc": "2.0", "id": len(sent), **member}))))

    return sent, request


@dataclass
class Error:
    """An error answer for `pages`."""

    error: dict[str, Any]


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
    assert found.problem == "tools/list was not answered with a result (no JSON-RPC answer)"
    assert found.refusal is None


def test_a_page_answered_with_an_error_is_a_refusal_not_a_result() -> None:
    """An error answer is judged as an error: the listing names it, and `refusal` hands it to the rows."""
    found = listing({"tools": [1], "nextCursor": "a"}, Error({"code": -32603, "message": "boom"}))
    assert found.items == [1]
    assert found.problem == "tools/list was answered with an error (error -32603), not a result"
    assert found.refusal is found.calls[-1]


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


CASE_A = "base.tools.list-shape[stdio@2025-11-25]"
CASE_B = "base.tools.name-rules[stdio@2025-11-25]"


def _as_case(key: str) -> None:
    """Run what follows as case `key`, as the runner sets it for each case (`no_case_left` unsets it)."""
    from conformance.engine.memo import CURRENT_KEY
    from conformance.engine.sessions import CURRENT_CASE

    CURRENT_CASE.set(key.split("[")[0])
    CURRENT_KEY.set(key)


@pytest.fixture(autouse=True)
def no_case_left() -> Iterator[None]:
    """The case a test claims to be (`_as_case`) is unset when it ends, so no later test inherits it."""
    from conformance.engine.memo import CURRENT_KEY
    from conformance.engine.sessions import CURRENT_CASE

    key, case = CURRENT_KEY.set(""), CURRENT_CASE.set("")
    yield
    CURRENT_KEY.reset(key)
    CURRENT_CASE.reset(case)


def test_a_remembered_failure_is_met_again_blocked_by_the_case_that_met_it() -> None:
    """One failure, one verdict: the case that met it gets it as it was; a later case gets the same kind
    of failure at once, nothing sent (`sent` false), naming that case (`blocked_by`); with a target-wide
    store (`also`, `once(across_revisions=True)`) another revision's store gets it too."""
    store: dict[str, Any] = {}
    target: dict[str, Any] = {}
    sent: list[int] = []

    async def breaks() -> int:
        sent.append(1)
        raise TransportTooLarge("a 20000000-byte message exceeded the 16777216-byte cap")

    async def answers() -> int:
        sent.append(1)
        return 42

    async def go() -> tuple[TransportTooLarge, TransportTooLarge, TransportTooLarge]:
        _as_case(CASE_A)
        with pytest.raises(TransportTooLarge) as met:
            await remember(store, "k", "tools/list page 1", breaks, target)
        _as_case(CASE_B)
        with pytest.raises(TransportTooLarge, match="already failed") as again:
            await remember(store, "k", "tools/list page 1", answers, target)
        with pytest.raises(TransportTooLarge) as elsewhere:
            await remember({}, "k", "tools/list page 1", answers, target)
        assert await remember({}, "k", "tools/list page 1", answers) == 42  # a revision's own fact
        return met.value, again.value, elsewhere.value

    met, again, elsewhere = asyncio.run(go())
    assert (met.blocked_by, met.sent) == (None, True)
    assert (again.blocked_by, again.sent) == (CASE_A, False)
    assert (elsewhere.blocked_by, elsewhere.sent) == (CASE_A, False)
    assert len(sent) == 2, "sent once where it failed, once where it was a revision's own fact"


def test_a_guarded_exchange_that_failed_blocks_its_dependants_without_sending() -> None:
    from conformance.engine.checks import Blocked
    from conformance.engine.memo import guarded

    store: dict[str, Any] = {}
    sent: list[int] = []

    async def go() -> Blocked:
        _as_case(CASE_A)
        with pytest.raises(TransportTimeout):
            async with guarded(store, "get", "a GET to the endpoint"):
                sent.append(1)
                raise TransportTimeout("no HTTP answer to GET within 10 s")
        _as_case(CASE_B)
        with pytest.raises(Blocked) as blocked:
            async with guarded(store, "get", "a GET to the endpoint"):
                sent.append(1)
        return blocked.value

    blocked = asyncio.run(go())
    assert (blocked.key, len(sent)) == (CASE_A, 1)
    assert blocked.message == "a GET to the endpoint already failed: no HTTP answer to GET within 10 s"


def test_a_failure_a_restart_reproduces_ends_at_its_second_occurrence() -> None:
    """The same request breaking its session the same way twice: the repeat is blocked by the first, and
    the request is not sent again (NotSent, blocked, nothing sent); others still are."""
    from conformance.engine.sessions import HangLedger
    from conformance.protocol.session import NotSent

    ledger = HangLedger()
    first, second = TransportTooLarge("over the cap"), TransportTooLarge("over the cap again")
    _as_case(CASE_A)
    ledger.failed("tools/list", first, first=False)
    _as_case(CASE_B)
    ledger.answered("ping")
    ledger.failed("tools/list", second, first=False, params={"_meta": {"progressToken": 7}})
    assert (first.blocked_by, second.blocked_by) == (None, CASE_A)
    with pytest.raises(
        NotSent, match="the same tools/list request already broke the message cap twice"
    ) as no:
        ledger.before("tools/list", None)
    assert (no.value.blocked_by, no.value.sent) == (CASE_A, False)
    ledger.before("tools/list", {"cursor": "2"})  # another request of the method: still sent
    ledger.before("resources/list", None)
    assert ledger.dead is None


def test_a_server_lost_counts_against_a_request_only_when_it_came_first() -> None:
    """A server that exits after answering a call loses the ping that follows: that ping killed nothing
    and is sent again; a request that is a session's first message and loses it, twice, is not."""
    from conformance.adapters.base import TransportClosed
    from conformance.engine.sessions import HangLedger
    from conformance.protocol.session import NotSent

    ledger = HangLedger()
    for case in (CASE_A, CASE_B):
        _as_case(case)
        ledger.answered("tools/call")
        ledger.failed("ping", TransportClosed("gone"), first=False)
    ledger.before("ping", None)
    for case in (CASE_A, CASE_B):
        _as_case(case)
        ledger.answered("resources/list")
        ledger.failed("tools/list", TransportClosed("gone"), first=True)
    with pytest.raises(NotSent, match="the same tools/list request already lost the server twice"):
        ledger.before("tools/list", None)


def test_restarts_that_break_on_their_first_request_whatever_it_is_end_the_revision() -> None:
    from conformance.adapters.base import TransportClosed
    from conformance.engine.sessions import HangLedger
    from conformance.protocol.session import NotSent

    ledger = HangLedger()
    _as_case(CASE_A)
    ledger.failed("ping", TransportClosed("gone"), first=True)
    _as_case(CASE_B)
    repeat = TransportClosed("gone")
    ledger.failed("tools/list", repeat, first=True)  # a restart's first request, nothing answered since
    assert ledger.dead is not None and repeat.blocked_by == CASE_A
    with pytest.raises(NotSent, match="every session of this revision lost the server") as refused:
        ledger.before("resources/list", None)
    assert refused.value.blocked_by == CASE_A


@pytest.mark.parametrize("between", ["a probe first", "an answer between"])
def test_a_session_a_case_crashed_on_purpose_reproduces_nothing(between: str) -> None:
    """A break after something else was sent on the session (a probe that made the server exit), or
    after an answer, is no restart reproducing the last break: the revision goes on."""
    from conformance.adapters.base import TransportClosed
    from conformance.engine.sessions import HangLedger

    ledger = HangLedger()
    _as_case(CASE_A)
    ledger.failed("ping", TransportClosed("gone"), first=True)
    _as_case(CASE_B)
    if between == "an answer between":
        ledger.answered("initialize")
    ledger.failed("tools/list", TransportClosed("gone"), first=between != "a probe first")
    assert ledger.dead is None
    ledger.before("resources/list", None)


def test_the_verdict_of_a_failure_stays_with_one_case() -> None:
    """A failure met first by a case that judged it no defect of its row (a sweep SKIPs a tool that
    never answers) is held by the next case that meets it (ERROR); later ones are blocked by that one."""
    from conformance.engine.context import TargetShared
    from conformance.engine.runner import holder_of

    shared = TargetShared()
    shared.verdicts["sweep"] = "SKIP"
    assert holder_of(shared, "sweep", "first") is None  # "first" holds it from now on
    shared.verdicts["first"] = "ERROR"
    assert holder_of(shared, "sweep", "second") == "first"
    shared.verdicts["second"], shared.holders["second"] = "SKIP", "first"
    assert holder_of(shared, "second", "third") == "first"
    assert holder_of(shared, "sweep", "fourth", take=False) == "first"


def test_pack_options_are_settled_once_whatever_replaces_the_options() -> None:
    """`RunOptions` settles the packs' options once (the fuzz seed drawn once): a `dataclasses.replace`
    (a target's timeout, a worker's `-j`) hands the settled values on instead of settling them again,
    and the CLI's and the pytest plugin's one builder (`api.run_options`) gives the same options."""
    import dataclasses

    from conformance.engine.context import RunOptions
    from conformance.front import api

    options = api.run_options(pack_values={"fuzz_seed": None, "fuzz_examples": 7})
    replaced = dataclasses.replace(options, timeout=3.0, jobs=2)
    assert replaced.pack_options is options.pack_options
    assert replaced.pack_option("fuzz_seed") == options.pack_option("fuzz_seed")
    assert options.pack_option("fuzz_examples") == 7

    def plain(o: RunOptions) -> dict[str, Any]:
        return {f.name: getattr(o, f.name) for f in dataclasses.fields(o) if f.name != "pack_options"}

    assert plain(api.run_options()) == plain(RunOptions()), "nothing given: RunOptions' defaults"


def test_a_case_verdict_is_read_by_the_verdict_modules_rules() -> None:
    """The runner reads a case's verdict here: a miss by the row's level, an outcome's own verdict, a
    returned check PASS unless it missed a SHOULD (WARN, FAIL under --strict) or judged weakly."""
    from conformance.model.verdicts import Verdict, finished_verdict, outcome_verdict

    assert outcome_verdict(None, "MUST") == Verdict.FAIL
    assert outcome_verdict(None, "SHOULD") == Verdict.WARN
    assert outcome_verdict(None, "SHOULD", strict=True) == Verdict.FAIL
    assert outcome_verdict(Verdict.SKIP, "MUST") == Verdict.SKIP
    assert finished_verdict(should_missed=False, weak=False) == Verdict.PASS
    assert finished_verdict(should_missed=False, weak=True, strict=True) == Verdict.WARN
    assert finished_verdict(should_missed=True, weak=True) == Verdict.WARN
    assert finished_verdict(should_missed=True, weak=False, strict=True) == Verdict.FAIL
