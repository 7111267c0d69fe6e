"""The reference's own RFC 8785 (JCS) and the UW semantic digest it stamps on every stored deal.

Written apart from the harness's implementation (`conformance/pack_api/jcs.py`) on purpose: the harness
recomputes the digests this server sends, and one implementation shared by both could carry a bug on
which server and oracle agree. tests/packs/uwmd/test_uwmd_jcs.py holds the two to the same vectors and to
5,000
random doubles.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Final

from conformance_reference.uwmd_codecs.model import JSON, MAX_DEPTH, VOLATILE

__all__ = ["canonical_json", "es_number", "etag", "semantic_digest"]


def canonical_json(value: Any) -> str:
    """RFC 8785 (JCS) text: members sorted by UTF-16 code units, ECMAScript numbers, minimal escapes."""
    out: list[str] = []
    _canon(value, out, 0)
    return "".join(out)


def _canon(value: Any, out: list[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError("nesting too deep to canonicalise")
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        # ECMAScript numbers are doubles: integers past 2**53 are serialised as the double they become.
        out.append(str(value) if abs(value) <= 2**53 else es_number(float(value)))
    elif isinstance(value, float):
        out.append(es_number(value))
    elif isinstance(value, str):
        out.append(_es_string(value))
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _canon(item, out, depth + 1)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("object member names must be strings")
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_units)):
            if index:
                out.append(",")
            out.append(_es_string(key))
            out.append(":")
            _canon(value[key], out, depth + 1)
        out.append("}")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def _utf16_units(key: str) -> list[int]:
    data = key.encode("utf-16-be", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _es_string(text: str) -> str:
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[char])
        elif code < 0x20:
            parts.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError("a lone surrogate has no canonical form")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def es_number(value: float) -> str:
    """ECMAScript Number::toString for a finite double, from Python's shortest round-trip digits."""
    if not math.isfinite(value):
        raise ValueError("NaN and Infinity are not JSON numbers")
    if value == 0:
        return "0"
    negative = value < 0
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    if "." in mantissa:
        whole, fraction = mantissa.split(".")
    else:
        whole, fraction = mantissa, ""
    digits = whole + fraction
    # value = 0.<digits> * 10**point once leading zeros are gone
    point = len(whole) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + (("." + digits[1:]) if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))
    return ("-" if negative else "") + body


def semantic_digest(envelope: JSON) -> str:
    """`sha256:` + SHA-256 of the JCS form of the envelope without its volatile generator members."""
    stable = {key: value for key, value in envelope.items() if key not in VOLATILE}
    return "sha256:" + hashlib.sha256(canonical_json(stable).encode("utf-8")).hexdigest()


def etag(digest: str) -> str:
    """The strong entity tag of a deal: the quoted semantic digest (HTTP binding §4)."""
    return f'"{digest}"'
