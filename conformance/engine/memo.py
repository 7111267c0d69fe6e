"""Facts computed once and shared by the cases that need them, failures included.

A fact whose exchange broke the transport is remembered as that failure: every later case that needs it
is ERROR at once, naming the case that paid for it, instead of waiting out the same timeout again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar, cast

from conformance.adapters.base import TransportError

T = TypeVar("T")


class Failed:
    """A shared exchange that broke the transport; later cases that need it are ERROR at once."""

    def __init__(self, owner: str, error: TransportError) -> None:
        self.owner, self.error = owner, error

    def reraise(self) -> NoReturn:
        raise type(self.error)(
            f"needs an exchange that already failed ({self.owner}): {self.error}",
            evidence=self.error.evidence,
        )


async def remember(store: dict[str, Any], key: str, owner: str, factory: Callable[[], Awaitable[T]]) -> T:
    """`store[key]`, computed by `factory` the first time; a transport failure is remembered too."""
    if key in store:
        value = store[key]
        if isinstance(value, Failed):
            value.reraise()
        return cast(T, value)
    try:
        result = await factory()
    except TransportError as exc:
        store[key] = Failed(owner, exc)
        raise
    store[key] = result
    return result
