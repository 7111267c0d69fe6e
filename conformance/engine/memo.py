"""Facts computed once and shared by the cases that need them, failures included.

A fact whose exchange broke the transport is remembered as that failure, with the case that met it:
every later case that needs it is SKIP at once, blocked by that case (the runner reads the failure's
`blocked_by`), instead of sending the exchange again and waiting out the same timeout. One defect is
one verdict, on the case that met it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar, cast

from conformance.adapters.base import TransportError
from conformance.engine.checks import Blocked

T = TypeVar("T")

#: The report key of the case running in this task, set by the runner: a failure remembered here names
#: it, so the cases that need the same exchange later are blocked by it.
CURRENT_KEY: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_conformance_case_key", default="")
#: The cases whose failures the running case met again (a remembered failure, a request not sent), set
#: by the runner per case: a case that caught such a failure and SKIPped is blocked by the first.
MET: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("mcp_conformance_met", default=None)


def blocked_copy(error: TransportError, case: str, message: str | None = None) -> TransportError:
    """`error` again, blocked by `case`: the same kind and evidence, for a case that did not meet it
    itself (nothing sent). A check that catches the transport failure still can; uncaught, the runner
    makes its case SKIP blocked by `case`."""
    again = copy.copy(error)
    if message is not None:
        again.args = (message,)
    again.blocked_by, again.sent = case, False
    met(case)
    return again


def met(case: str) -> None:
    """Note that the running case met a failure of `case` again (`MET`)."""
    seen = MET.get()
    if seen is not None and case:
        seen.append(case)


class Failed:
    """A shared exchange that broke the transport, and the case that met it (`case`, its report key)."""

    def __init__(self, owner: str, error: TransportError, case: str = "") -> None:
        self.owner, self.error = owner, error
        # A failure that was itself a remembered one keeps naming the case that met it first.
        self.case = error.blocked_by or case

    def reraise(self) -> NoReturn:
        if self.error.blocked_by:  # already says which exchange failed, and where
            raise blocked_copy(self.error, self.case)
        # The runner names the case (`blocked by KEY: ...`); the message says what failed and how.
        message = f"needs an exchange that already failed ({self.owner}): {self.error}"
        raise blocked_copy(self.error, self.case, message)


def failed_in(stores: list[dict[str, Any]], key: str) -> Failed | None:
    """The failure remembered under `key` in the first of `stores` that holds one."""
    for store in stores:
        value = store.get(key)
        if isinstance(value, Failed):
            return value
    return None


async def remember(
    store: dict[str, Any],
    key: str,
    owner: str,
    factory: Callable[[], Awaitable[T]],
    also: dict[str, Any] | None = None,
) -> T:
    """`store[key]`, computed by `factory` the first time; a transport failure is remembered too, in
    `also` as well when given (a failure of the target, not of one revision: `CaseContext.remember_once`)."""
    if key in store:
        value = store[key]
        if isinstance(value, Failed):
            value.reraise()
        return cast(T, value)
    known = failed_in([also], key) if also is not None else None
    if known is not None:
        known.reraise()
    try:
        result = await factory()
    except TransportError as exc:
        _keep(Failed(owner, exc, CURRENT_KEY.get()), key, store, also)
        raise
    store[key] = result
    return result


@contextlib.asynccontextmanager
async def guarded(
    store: dict[str, Any],
    key: str,
    owner: str,
    also: dict[str, Any] | None = None,
    lock: asyncio.Lock | None = None,
) -> AsyncIterator[None]:
    """An exchange observed once: when it already failed (under `key`, in `store` or `also`), raise
    `Blocked` naming the case that met it, sending nothing (an outcome, not a transport failure, so no
    check takes it for one it met itself); a transport failure inside the block is remembered so.
    `lock` (one per key and target) holds a case of another revision running at once (`-j`) until
    this one's exchange has an outcome, so it is not sent twice side by side either."""
    async with lock if lock is not None else contextlib.nullcontext():
        known = failed_in([store] if also is None else [store, also], key)
        if known is not None:
            met(known.case)
            raise Blocked(f"{owner} already failed: {known.error}", "", known.case)
        try:
            yield
        except TransportError as exc:
            _keep(Failed(owner, exc, CURRENT_KEY.get()), key, store, also)
            raise


def _keep(failed: Failed, key: str, store: dict[str, Any], also: dict[str, Any] | None) -> None:
    store[key] = failed
    if also is not None:
        also.setdefault(key, failed)
