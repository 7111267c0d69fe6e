"""Scheduling for cases that reset or move a target's shared state: a reader-writer section per target.

Revisions of one target may run at once (`-j`), all against one service. A case that wipes the state or
moves the service clock would turn a concurrent case's reading into a false verdict (a vanished record,
a false expiry); such a case runs in the target's exclusive section, which waits until no case is in
the shared section and holds new ones back while it runs. Cases that only read or make state of their
own take the shared section. With one job at a time the section is never contended.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class Section:
    """Shared for ordinary cases, exclusive for the ones that reset or move shared state.

    A waiting exclusive case goes first: shared cases that arrive after it wait, so a steady stream of
    readers cannot starve it.
    """

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0

    @contextlib.asynccontextmanager
    async def hold(self, exclusive: bool) -> AsyncIterator[None]:
        async with self._condition:
            if exclusive:
                self._waiting += 1
                try:
                    await self._condition.wait_for(lambda: not self._exclusive and self._shared == 0)
                finally:
                    self._waiting -= 1
                self._exclusive = True
            else:
                await self._condition.wait_for(lambda: not self._exclusive and self._waiting == 0)
                self._shared += 1
        try:
            yield
        finally:
            async with self._condition:
                if exclusive:
                    self._exclusive = False
                else:
                    self._shared -= 1
                self._condition.notify_all()
