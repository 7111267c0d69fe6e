"""The wire log every transport records, with secrets masked on the way in, and the one form of a
cut in it.

Why its own module: the log is cut twice, for two budgets. While a target runs, past
`TRANSCRIPT_BUDGET` each case keeps its first and latest entries (the harness's memory must not grow
with what a server floods); when the report is written, each case's transcript is cut to its share of
the run's report budget (`reporting.canonical.bound_transcript`). Both cuts leave the same marker
entry (`omitted_marker`) where entries were left out, and a later cut counts an earlier one's marker
as the entries it stands for (`omitted_of`), so a reader meets one form, however often a log was cut.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import Any

from conformance.text import REDACTED, masker

#: How many bytes of one message a transcript keeps; the rest is counted, not stored.
TRANSCRIPT_BYTES_PER_ENTRY = 64 * 1024
#: How many bytes one target's transcript keeps in all; past it each case (each `mark`) keeps only its
#: first and its latest entry, around one marker entry counting the others, so a server that floods
#: cannot exhaust the harness's memory.
TRANSCRIPT_BUDGET = 48 * 1024 * 1024
#: How many bytes of one message an entry keeps once the budget is spent (the first and last of a case).
SPENT_BYTES_PER_ENTRY = 2 * 1024

SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


class Transcript:
    """An append-only wire log shared by all adapters of one target, with secrets masked on the way in.

    Entries are plain dicts so the canonical report can embed them without conversion. Once
    `TRANSCRIPT_BUDGET` is spent, what is recorded since the latest `mark` (a case's start) keeps its
    first entry and its latest one, each cut to `SPENT_BYTES_PER_ENTRY`, around one marker entry
    (`dir: "event"`, `omitted: {"entries": N, "bytes": B}`, the form the report's own budget uses)
    counting those in between: memory grows with the cases run, never with what a server sends.
    """

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        self.entries: list[dict[str, Any]] = []
        self.kept_bytes = 0
        #: Entries recorded past the budget and not kept (each counted by its case's marker).
        self.dropped = 0
        #: Where the latest `mark` was, and, past the budget, the marker and latest entry after it.
        self._window = 0
        self._marker: dict[str, Any] | None = None
        self._latest: dict[str, Any] | None = None
        self._latest_bytes = 0
        self._t0 = time.monotonic()
        #: Masks the target's secrets in every form a server can echo them in (`text.Masker`).
        self.masker = masker(tuple(secrets))

    def _now(self) -> float:
        return round(time.monotonic() - self._t0, 6)

    def mask(self, text: str) -> str:
        return self.masker.text(text)

    def mask_value(self, value: Any) -> Any:
        """Mask secrets anywhere in a JSON-like value: server text reaches messages and evidence too."""
        return self.masker.value(value)

    def mask_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Headers as recorded: a credential header's value is never kept, any other masked (a server
        may echo a secret in a header of its own, or in a header's name)."""
        return {
            self.mask(k): (REDACTED if k.lower() in SENSITIVE_HEADERS else self.mask(v))
            for k, v in headers.items()
        }

    def mark(self) -> int:
        """Position to slice from, so a case can attach exactly its own part of the log (past the
        budget, the first and latest entries after it are kept)."""
        self._window = len(self.entries)
        self._marker = self._latest = None
        return self._window

    def _spent(self, entry: dict[str, Any], size: int) -> None:
        """Keep `entry` past the budget: as the first entry since the latest mark, or as its latest
        frame, the frame it replaces counted by the marker entry before it (`omitted_marker`)."""
        entries = self.entries
        latest = self._latest
        if len(entries) == self._window or entry["dir"] in ("event", "send"):
            # The first entry since the mark, or the harness's own word or message (a timeout, a
            # request: one per exchange at most, never a server's flood): kept for good, so the
            # checks that read the whole log can still match each response to its request.
            entries.append(entry)
            return
        if latest is None or entries[-1] is not latest:
            # The second entry since the mark (or one after another adapter's, or one kept while the
            # budget lasted): the latest so far.
            entries.append(entry)
            self._latest, self._latest_bytes, self._marker = entry, size, None
            return
        self.dropped += 1
        marker = self._marker
        if marker is None:
            marker = omitted_marker(latest["t"], 0, 0, kept="latest")
            entries.insert(len(entries) - 1, marker)
            self._marker = marker
        count, dropped = omitted_of(marker) or (0, 0)
        marker.update(omitted_marker(marker["t"], count + 1, dropped + self._latest_bytes, kept="latest"))
        entries[-1] = self._latest = entry
        self._latest_bytes = size

    def since(self, mark: int) -> list[dict[str, Any]]:
        return self.entries[mark:]

    def record(
        self,
        direction: str,
        data: bytes = b"",
        *,
        channel: str = "",
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        note: str = "",
    ) -> None:
        spent = self.kept_bytes > TRANSCRIPT_BUDGET
        per_entry = SPENT_BYTES_PER_ENTRY if spent else TRANSCRIPT_BYTES_PER_ENTRY
        entry: dict[str, Any] = {"t": self._now(), "dir": direction}
        if channel:
            # A server's words can be in it: an HTTP status line's reason phrase.
            entry["channel"] = self.mask(channel)
        if data:
            kept = data[:per_entry]
            self.kept_bytes += len(kept) + 64
            # A secret the cut split in two is masked too (`Masker.cut`).
            mask = self.masker.cut if len(data) > len(kept) else self.mask
            try:
                entry["text"] = mask(kept.decode("utf-8"))
            except UnicodeDecodeError as exc:
                if len(data) > len(kept) and exc.start >= len(kept) - 3:
                    # The cut, not the server, split a character: keep the whole characters before it.
                    entry["text"] = mask(kept[: exc.start].decode("utf-8"))
                else:
                    # Not UTF-8: masked as bytes (the bytes that are not UTF-8 kept), then encoded.
                    masked = mask(kept.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
                    entry["base64"] = base64.b64encode(masked).decode("ascii")
            if len(data) > len(kept):
                entry["truncated_from"] = len(data)
        if status is not None:
            entry["status"] = status
        if headers is not None:
            entry["headers"] = self.mask_headers(headers)
        if note:
            entry["note"] = self.mask(note)
        if spent:
            self._spent(entry, len(data))
        else:
            self.entries.append(entry)

    def absorb(self, other: Transcript) -> None:
        """Take over `other`'s entries, stamped now: a transport started ahead of time (a spare
        server process) shows its start in the case that uses it, not in whichever case was running."""
        now = self._now()
        for entry in other.entries:
            self.entries.append({**entry, "t": now, "ahead": True})
        self.kept_bytes += other.kept_bytes
        self.dropped += other.dropped


def omitted_marker(
    t: float, entries: int, size: int, *, kept: str, why: str = "transcript budget spent"
) -> dict[str, Any]:
    """The marker entry a cut transcript keeps where it left `entries` entries (`size` bytes) out:
    `dir: "event"`, their counts under `omitted`, and a note saying which budget cut them (`why`) and
    which entries around it are kept (`kept`: "latest" while the log grows, "last" in the report)."""
    return {
        "t": t,
        "dir": "event",
        "note": (
            f"{why}: {entries} transcript entries ({size} bytes) left out here; the first and {kept} "
            "entries are kept"
        ),
        "omitted": {"entries": entries, "bytes": size},
    }


def omitted_of(entry: dict[str, Any]) -> tuple[int, int] | None:
    """(entries, bytes) a marker entry stands for, so a later cut counts what an earlier one left
    out; None for any other entry."""
    omitted = entry.get("omitted")
    if not isinstance(omitted, dict):
        return None if "omitted" not in entry else (1, 0)
    entries: int = omitted.get("entries", 1)
    size: int = omitted.get("bytes", 0)
    return entries, size
