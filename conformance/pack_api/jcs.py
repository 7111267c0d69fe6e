"""RFC 8785 JSON Canonicalization Scheme (JCS): the harness's one implementation, for every pack.

Why one: a digest the harness recomputes (the MAP contract digest, the UW semantic digest) is an oracle,
and two oracles that disagree make two verdicts on the same bytes; map-review's copy once wrote 2**60 as
1152921504606846976 where RFC 8785 (an ECMAScript double) says 1152921504606847000. Pack-specific rules
(which members a digest leaves out, `sha-256:` or `sha256:`) stay in the packs; the text is made here.

The reference servers keep an RFC 8785 implementation of their own
(`conformance_reference/uwmd_codecs/jcs.py`), written apart on purpose: a bug here must not be able to
make a server and its oracle agree. tests/pack_api/test_jcs.py pins this one to RFC 8785's own examples.
"""

from __future__ import annotations

import decimal
import hashlib
import math
from typing import Any, Final

__all__ = ["CanonicalError", "canonicalize", "number", "sha256_hex", "string"]

#: ECMAScript numbers are IEEE doubles: an integer beyond this is written as the double it becomes.
SAFE_INTEGER: Final = 2**53
_ESCAPES: Final = {
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x22: '\\"',
    0x5C: "\\\\",
}


class CanonicalError(ValueError):
    """The value has no canonical form (NaN, Infinity, a lone surrogate, a non-JSON type)."""


def canonicalize(value: Any) -> str:
    """The JCS text of a JSON value (RFC 8785 section 3.2)."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def sha256_hex(value: Any) -> str:
    """The lower-case hex SHA-256 of the value's JCS UTF-8 bytes; each profile adds its own prefix."""
    return hashlib.sha256(canonicalize(value).encode("utf-8")).hexdigest()


def _write(value: Any, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif isinstance(value, bool):
        parts.append("true" if value else "false")
    elif isinstance(value, int):
        parts.append(str(value) if -SAFE_INTEGER <= value <= SAFE_INTEGER else _big_integer(value))
    elif isinstance(value, float):
        parts.append(number(value))
    elif isinstance(value, str):
        parts.append(string(value))
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            parts.append("," if index else "")
            _write(item, parts)
        parts.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise CanonicalError("object member names must be strings")
        parts.append("{")
        for index, key in enumerate(sorted(value, key=_code_units)):
            parts.append("," if index else "")
            parts.append(string(key))
            parts.append(":")
            _write(value[key], parts)
        parts.append("}")
    else:
        raise CanonicalError(f"not a JSON value: {type(value).__name__}")


def _big_integer(value: int) -> str:
    """An integer past 2**53 as the double JSON.parse makes of it; past the double range, refused."""
    try:
        return number(float(value))
    except OverflowError:
        raise CanonicalError("an integer beyond the double range has no JSON form") from None


def _code_units(text: str) -> bytes:
    """The sort key of RFC 8785 section 3.2.3: UTF-16 code units compared as unsigned numbers, which
    big-endian UTF-16 bytes compare as."""
    return text.encode("utf-16-be", errors="surrogatepass")


def string(text: str) -> str:
    """A JSON string literal as RFC 8785 section 3.2.2.2 (ECMAScript JSON.stringify) writes it: only `"`,
    `\\` and the controls escaped, the short forms where JSON has them, else `\\u00xx` in lower case."""
    out = ['"']
    for char in text:
        code = ord(char)
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code < 0xE000:
            raise CanonicalError("a lone surrogate cannot be canonicalised")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def number(value: float) -> str:
    """ECMAScript Number::toString (ECMA-262 section 6.1.6.1.20) of a finite double, RFC 8785 3.2.2.3.

    Python's repr gives the shortest digit string that round-trips, the digits ECMAScript chooses; what
    differs is only where the decimal point and the exponent go, which the four cases below place.
    """
    if math.isnan(value) or math.isinf(value):
        raise CanonicalError("NaN and Infinity have no JSON form")
    if value == 0:
        return "0"  # -0 included
    sign, digits_tuple, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple)
    assert isinstance(exponent, int)
    k = len(digits)
    n = exponent + k  # value = 0.d1d2...dk x 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        exp = n - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"
    return ("-" if sign else "") + text
