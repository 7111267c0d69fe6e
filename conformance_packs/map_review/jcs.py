"""RFC 8785 JSON Canonicalization Scheme, for the MAP contract digest (`sha-256:` + SHA-256 of JCS).

MAP Core identifies a contract by the SHA-256 of its JCS form. The harness recomputes it for a contract
file a target supplies (MAP-DIG-005, MAP-READ-006); the project's tests pin the method against RFC 8785's
own example and against the one published contract revision (sha-256:247dc852...0c5b).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any


def canonical(value: Any) -> str:
    """The JCS text of a JSON value: sorted keys (UTF-16 code units), ES6 numbers, minimal escapes."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return (
            "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k]) for k in keys) + "}"
        )
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def digest(value: Any) -> str:
    """`sha-256:` + the lower-case hex SHA-256 of the value's JCS UTF-8 bytes (the MAP spelling)."""
    return "sha-256:" + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def _number(value: float) -> str:
    """ECMAScript Number.prototype.toString of a finite double (RFC 8785 section 3.2.2.3)."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError("NaN and Infinity have no JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # The decimal point sits after `point` digits of `digits` (before trailing-zero trimming).
    point = len(whole.lstrip("0")) if whole.strip("0") else -(len(fraction) - len(fraction.lstrip("0")))
    point += int(exponent or 0)
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        sign_e = "+" if e >= 0 else "-"
        text = (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + sign_e + str(abs(e))
    return sign + text
