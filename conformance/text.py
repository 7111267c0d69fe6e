"""Bytes as readable text: the one way a message, evidence or any view shows bytes.

A Python `b'...'` repr is no text a user should have to read, and it differs between a line that is
valid UTF-8 and one that is not. So bytes are decoded as UTF-8 and shown as text, with escapes only for
what cannot be shown as it is: `\\n`, `\\r`, `\\t`, `\\xNN` for a byte that is not UTF-8 or a control
character, `\\uNNNN` for an invisible format or separator character (a bidi override must not reorder a
terminal line), and `\\\\` for a backslash, so an escape can never be mistaken for the text itself.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Unicode categories shown as escapes: controls, format characters, separators other than a space,
#: surrogates (a lone one, or a byte that was not UTF-8), unassigned and private-use code points.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn", "Co"})


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
        elif char != " " and unicodedata.category(char) in _ESCAPED:
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
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
