"""RFC 8785 (JCS) and the UW semantic digest, as the harness recomputes them (UWMD-RES-012, SCOPE-001).

The binding's ETag is the quoted semantic digest: `sha256:` + SHA-256 of the JCS form of the envelope
without `generated_at`, `generator` and `semantic_digest`. The harness recomputes it from the bytes a server
sends, so this implementation is the oracle; it is written apart from the reference server's (which lives
in `conformance_reference/uwmd_codecs.py`) so that one bug cannot make both agree. The project's tests pin
it to RFC 8785's own examples, to the catalog's Parkview digest (sha256:98cf81a8...9fb7) and to the digest
vectors in `vectors/uwmd/`.
"""

from __future__ import annotations

import decimal
import hashlib
import math
from typing import Any, Final

#: Members of the envelope the semantic digest leaves out: they change on every render.
VOLATILE: Final = frozenset({"generated_at", "generator", "semantic_digest"})
#: ECMAScript numbers are IEEE doubles: an integer beyond this is serialised as the double it becomes.
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
    """The JCS text of a JSON value."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif isinstance(value, bool):
        parts.append("true" if value else "false")
    elif isinstance(value, int):
        parts.append(str(value) if -SAFE_INTEGER <= value <= SAFE_INTEGER else number(float(value)))
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


def _code_units(text: str) -> bytes:
    """The sort key of RFC 8785 §3.2.3: UTF-16 code units, compared as unsigned numbers (big-endian bytes)."""
    return text.encode("utf-16-be", errors="surrogatepass")


def string(text: str) -> str:
    """A JSON string literal as ECMAScript JSON.stringify writes it: only `"`, `\\` and controls escaped."""
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
    """ECMAScript Number::toString (ECMA-262 §6.1.6.1.20) of a finite double.

    Python's repr gives the shortest digit string that round-trips, the same digits ECMAScript chooses;
    what differs is only where the decimal point and exponent go, which the four cases below place.
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


def semantic_digest(envelope: dict[str, Any]) -> str:
    """`sha256:` + hex SHA-256 of the JCS UTF-8 bytes of the envelope without its volatile members."""
    stable = {key: value for key, value in envelope.items() if key not in VOLATILE}
    return "sha256:" + hashlib.sha256(canonicalize(stable).encode("utf-8")).hexdigest()


def digest_of_text(text: str) -> str:
    """`sha256:` + SHA-256 of canonical JSON text given as a string (the upstream lite vectors' form)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
