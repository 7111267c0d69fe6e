"""Text the harness shows and text it must never show.

Bytes as readable text (`bytes_text`), server text made visible (`visible`, the one escaping helper
every view uses) and secrets masked in every form a server can echo them in (`Masker`).

Bytes: a Python `b'...'` repr is no text a user should have to read, and it differs between a line
that is valid UTF-8 and one that is not. So bytes are decoded as UTF-8 and shown as text, with escapes
only for what cannot be shown as it is: `\\n`, `\\r`, `\\t`, `\\xNN` for a byte that is not UTF-8 or a
control character, `\\uNNNN` for an invisible format or separator character (a bidi override must not
reorder a terminal line), and `\\\\` for a backslash, so an escape can never be mistaken for the text.

Server text: `visible` shows the same characters the same way in every view (terminal, progress,
Markdown, JUnit, HTML, SARIF, compare, diff): C0 and C1 controls as `\\xNN`, format characters (bidi
embeddings, overrides and isolates, the marks, zero-width characters), separators, surrogates,
unassigned and private-use code points as `\\uNNNN`.
"""

from __future__ import annotations

import base64
import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Unicode categories shown as escapes: controls, format characters, separators other than a space,
#: surrogates (a lone one, or a byte that was not UTF-8), unassigned and private-use code points.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn", "Co"})
#: Characters that may need an escape (printable ASCII never does); with `lines`, a line break and a
#: tab are kept too.
_CANDIDATES = re.compile(r"[^\x20-\x7e]")
_CANDIDATES_LINES = re.compile(r"[^\x20-\x7e\n\t]")


def escape_char(char: str) -> str:
    """One character as its escape: `\\x1b`, `\\u202e`, `\\U000e0001`."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def invisible(char: str) -> bool:
    """Whether a view shows `char` as an escape: it is a control, format, separator (but a space),
    surrogate, unassigned or private-use character."""
    return char != " " and unicodedata.category(char) in _ESCAPED


@functools.lru_cache(maxsize=4096)
def _shown(char: str) -> str:
    return escape_char(char) if invisible(char) else char


def visible(text: str, *, lines: bool = False) -> str:
    """`text` as every view shows server text: each invisible character (`invisible`) as its escape,
    so no escape sequence drives a terminal and no bidi control reorders what a reader sees. With
    `lines`, line breaks and tabs are kept (a block of several lines: a `<pre>`, a JUnit body)."""
    return (_CANDIDATES_LINES if lines else _CANDIDATES).sub(lambda m: _shown(m.group()), text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(document: str) -> str:
    """A JSON document (as `json.dumps(..., ensure_ascii=False)` writes it) with every invisible
    character as a JSON `\\uNNNN` escape: the same data, and nothing raw for a terminal to obey."""
    return _CANDIDATES_LINES.sub(lambda m: _json_escape(c) if invisible(c := m.group()) else c, document)


def bytes_text(data: bytes | bytearray | memoryview, limit: int | None = None) -> str:
    """`data` as text with escapes; beyond `limit` bytes it is cut, and says how long it was."""
    whole = bytes(data)
    shown = whole if limit is None else whole[:limit]
    out = []
    for char in shown.decode("utf-8", errors="surrogateescape"):
        code = ord(char)
        if char in _NAMED:
            out.append(_NAMED[char])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif invisible(char):
            out.append(escape_char(char))
        else:
            out.append(char)
    text = "".join(out)
    if len(shown) < len(whole):
        text += f"... ({len(whole)} bytes)"
    return text


def readable(value: Any) -> str:
    """A JSON-ready form of `value` for a report: bytes as text (bytes_text), anything else as str.

    The `default=` of every json.dump a report is written with: evidence that holds bytes is shown as
    text, never as a repr and never as a failure to write the report.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes_text(value)
    return str(value)


# --------------------------------------------------------------------------- secrets

#: What a masked secret becomes.
REDACTED = "[redacted]"
#: Secrets shorter than this are not masked: three characters or fewer occur in ordinary text (ids,
#: words, numbers), so masking them would blank the report without protecting anything. The CLI warns
#: about each target that has one.
MIN_SECRET_CHARS = 4
#: An escape a server may have put a secret's characters in: JSON and JavaScript escapes (any number of
#: backslashes, for text escaped twice; hex digits in either case), a run of percent-encoded bytes and
#: an HTML character reference. A secret is looked for in the text as it is and with these decoded.
_ESCAPE = re.compile(
    r"\\\\*(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([\"\\/bfnrt]))"
    r"|%([0-9a-fA-F]{2}(?:%[0-9a-fA-F]{2})*)"
    r"|&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));"
)
_SHORT = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_URL_SAFE = str.maketrans("+/", "-_")


def _utf16(text: str) -> str:
    """`text` with each character beyond the BMP as its surrogate pair, as `\\uD83D\\uDE00` decodes."""
    out = []
    for char in text:
        code = ord(char) - 0x10000
        out.append(char if code < 0 else chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


def _base64_runs(secret: str) -> list[str]:
    """The runs of base64 characters fixed by the secret's bytes alone, at each of the three byte
    alignments the secret can have inside a longer base64 string (`Basic base64(user:secret)`):
    found, they show the secret whatever comes before or after it, padded or not."""
    data = secret.encode("utf-8", "surrogatepass")
    runs = []
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + data + b"\0\0").decode("ascii")
        run = encoded[-(-8 * lead // 6) : 8 * (lead + len(data)) // 6]
        if len(run) >= MIN_SECRET_CHARS:
            runs.append(run)
    return runs


class _Decoded:
    """`text` with its escapes (`_ESCAPE`) decoded, and the way back: where in `text` each decoded
    character came from."""

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        #: Per segment: its first decoded index, and its span in `text`; a segment is a literal run
        #: (decoded and original alike, character by character) or one decoded character.
        self.starts: list[int] = []
        self.spans: list[tuple[int, int, bool]] = []
        size = at = 0
        for match in _ESCAPE.finditer(text):
            if match.start() > at:
                self._add(parts, text[at : match.start()], size, at, match.start(), True)
                size += match.start() - at
            at = match.end()
            for char, begin, end in _decode(match):
                self._add(parts, char, size, begin, end, False)
                size += 1
        if at < len(text):
            self._add(parts, text[at:], size, at, len(text), True)
        self.text = "".join(parts)

    def _add(self, parts: list[str], piece: str, index: int, begin: int, end: int, literal: bool) -> None:
        parts.append(piece)
        self.starts.append(index)
        self.spans.append((begin, end, literal))

    def original(self, index: int, *, end: bool = False) -> int:
        """Where decoded character `index` starts in the text (with `end`: where it ends)."""
        segment = bisect.bisect_right(self.starts, index) - 1
        begin, stop, literal = self.spans[segment]
        if literal:
            return begin + index - self.starts[segment] + (1 if end else 0)
        return stop if end else begin


def _decoded_char(match: re.Match[str]) -> str:
    unicode = match.group(1)
    if unicode is not None:
        return chr(int(unicode, 16))
    return "".join(char for char, _, _ in _decode(match))


def _decode(match: re.Match[str]) -> list[tuple[str, int, int]]:
    """One escape as (character, start, end) in the text; a run of percent-encoded bytes is each of
    the characters it encodes, a byte that is no UTF-8 as itself."""
    unicode, wide, byte, short, percent, html_hex, html_dec = match.groups()
    start, end = match.span()
    if percent is not None:
        data = bytes(int(percent[i : i + 2], 16) for i in range(0, len(percent), 3))
        out, at = [], start
        for char in data.decode("utf-8", "surrogateescape"):
            width = 3 * (1 if 0xDC80 <= ord(char) <= 0xDCFF else len(char.encode("utf-8", "surrogatepass")))
            out.append((char, at, at + width))
            at += width
        return out
    if short is not None:
        return [(_SHORT.get(short, short), start, end)]
    code = int(unicode or wide or byte or html_hex or "0", 16) if html_dec is None else int(html_dec)
    if code > 0x10FFFF:
        return [("\ufffd", start, end)]  # no character: never part of a secret
    return [(chr(code), start, end)]


class Masker:
    """Replaces secrets with `REDACTED` in text, bytes and JSON-like values, in every form a server
    can echo them in: as they are; JSON- or JavaScript-escaped (`\\uXXXX` for any mix of characters,
    hex digits in either case, `\\/`, surrogate pairs, escaped twice); percent-encoded (either case,
    a space also as `+`); as HTML character references; in base64, standard or URL-safe, padded or
    not, at each alignment within a longer base64 string (a `Basic` credential), also with its own
    characters escaped. Secrets shorter than `MIN_SECRET_CHARS` are not masked (`short` counts them).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        given = {s for s in secrets if s}
        kept = sorted((s for s in given if len(s) >= MIN_SECRET_CHARS), key=lambda s: (-len(s), s))
        #: The secrets masked, longest first.
        self.secrets = tuple(kept)
        #: How many secrets were too short to mask.
        self.short = len(given) - len(kept)
        needles: list[str] = []
        for secret in kept:
            forms = [secret, _utf16(secret)]
            if " " in secret:
                forms.append(secret.replace(" ", "+"))  # a form-encoded space
            for run in _base64_runs(secret):
                forms += [run, run.translate(_URL_SAFE)]
            needles += forms
        #: Every string whose presence shows a secret (in the text, or in the text decoded).
        self.needles = tuple(dict.fromkeys(needles))

    def __bool__(self) -> bool:
        return bool(self.needles)

    def text(self, text: str) -> str:
        if not self.needles:
            return text
        spans = _found(text, self.needles)
        # Decoded cheaply first; where each decoded character came from is worked out only for a
        # text that shows a secret once decoded.
        cheap = _ESCAPE.sub(_decoded_char, text)
        if cheap != text and any(needle in cheap for needle in self.needles):
            decoded = _Decoded(text)
            spans += [
                (decoded.original(start), decoded.original(end - 1, end=True))
                for start, end in _found(decoded.text, self.needles)
            ]
        if not spans:
            return text
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        out, at = [], 0
        for start, end in merged:
            out += [text[at:start], REDACTED]
            at = end
        out.append(text[at:])
        return "".join(out)

    def data(self, data: bytes) -> bytes:
        """`data` with every secret masked, bytes that are not UTF-8 kept as they are."""
        if not self.needles:
            return data
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def cut(self, text: str) -> str:
        """`text` that a cut ended, masked, with a secret's first characters at its very end masked
        too (the cut left the rest of it out)."""
        text = self.text(text)
        for secret in self.secrets:
            for size in range(len(secret) - 1, 2, -1):
                if text.endswith(secret[:size]):
                    return text[:-size] + REDACTED
        return text

    def value(self, value: Any) -> Any:
        """A JSON-like value with every secret masked in its strings and keys; bytes stay bytes, and
        anything else that would be written as its text (`readable`) is masked as that text."""
        if not self.needles:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, bytes | bytearray | memoryview):
            return self.data(bytes(value))
        text = readable(value)
        masked = self.text(text)
        return value if masked == text else masked


def _found(text: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """The span of every occurrence of every needle in `text`."""
    spans = []
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            spans.append((at, at + len(needle)))
            at = text.find(needle, at + 1)
    return spans


@functools.lru_cache(maxsize=64)
def masker(secrets: tuple[str, ...]) -> Masker:
    """The one `Masker` of these secrets (its needles are worked out once)."""
    return Masker(secrets)


# --------------------------------------------------------------------------- suggestions


def closest(word: str, candidates: Iterable[str], *, n: int = 1) -> list[str]:
    """The candidates `word` was most likely meant to be, best first, for a "did you mean": one that
    differs only in case first (`explain base-rpc-002`), else the nearest by `difflib` on lower-cased
    text (`--sever`, `rnu`), else none."""
    import difflib

    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), candidate)
    wanted = word.lower()
    if wanted in by_lower:
        return [by_lower[wanted]]
    return [by_lower[c] for c in difflib.get_close_matches(wanted, list(by_lower), n=n, cutoff=0.6)]


def by_cause(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """`(revision, why)` pairs as one line per distinct why, with the revisions it holds for, in first
    seen order (`2026-07-28, 2025-11-25: connection refused at 127.0.0.1:9`): a target that is not there
    says so once, not once per revision."""
    grouped: dict[str, list[str]] = {}
    for revision, why in pairs:
        grouped.setdefault(why, []).append(revision)
    return [f"{', '.join(revisions)}: {why}" for why, revisions in grouped.items()]
