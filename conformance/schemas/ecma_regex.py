"""Is a JSON Schema `pattern` a regular expression? Judged in ECMA-262's dialect, as JSON Schema says.

JSON Schema 2020-12 (validation, section 6.3.3): a pattern "SHOULD be a valid regular expression,
according to the ECMA-262 regular expression dialect". jsonschema's `regex` format compiles it with
Python's `re`, which rejects valid ECMA-262 syntax that Python spells differently: named groups
`(?<year>...)` and their back-references `\\k<year>`, Unicode property escapes `\\p{L}`, code point
escapes `\\u{1F600}`, control escapes `\\cJ`, the classes `[^]` and `[]`, lookbehinds of varying
width, and back-references to a group that is still open or comes later. A tool schema using
them is a valid schema; judging it with Python's dialect would fail it wrongly.

So a pattern is rewritten token by token into Python's spelling of the same construct and then
compiled. The rewrite is for judging syntax only: a property escape becomes `\\w`, which has the
same grammar but not the same meaning, so the result must never be used to match. Python-only
syntax (`(?P<n>...)`, inline flags) is not hunted down: it is rare in ECMA-262 schemas, and the
requirement is a SHOULD, so the judgement leans to the server.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _groups(pattern: str) -> tuple[int, frozenset[str]]:
    """How many capturing groups `pattern` has, and their names (escapes and classes skipped)."""
    count, names = 0, set()
    i, n, in_class = 0, len(pattern), False
    while i < n:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(" and not pattern.startswith("?", i + 1):
            count += 1
        elif (
            pattern.startswith("(?<", i)
            and (name := _NAME.match(pattern, i + 3))
            and pattern.startswith(">", name.end())
        ):
            count += 1
            names.add(name.group())
        i += 1
    return count, frozenset(names)


def python_spelling(pattern: str) -> str:
    """`pattern` with ECMA-262-only syntax replaced by Python syntax of the same grammar."""
    out: list[str] = []
    groups = _groups(pattern)
    i, n, in_class = 0, len(pattern), False
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            i = _escape(pattern, i, out, groups)
            continue
        if in_class:
            in_class = char != "]"
            out.append(char)
        elif pattern.startswith("[^]", i):
            out.append(r"[\s\S]")
            i += 3
            continue
        elif pattern.startswith("[]", i):
            out.append("(?!)")
            i += 2
            continue
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern.startswith("^", i + 1):  # `[^]...]`: a leading `]` is still a member in Python
                out.append("^")
                i += 1
        elif pattern.startswith(("(?<=", "(?<!"), i):
            # ECMA-262 lookbehinds may vary in width, Python's may not: same grammar as a lookahead.
            out.append("(?" + pattern[i + 3])
            i += 4
            continue
        elif (
            pattern.startswith("(?<", i)
            and (name := _NAME.match(pattern, i + 3))
            and (pattern.startswith(">", name.end()))
        ):
            out.append(f"(?P<{_python_name(name.group())}>")
            i = name.end() + 1
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _escape(pattern: str, i: int, out: list[str], groups: tuple[int, frozenset[str]]) -> int:
    """Rewrite the escape at `pattern[i]` (a backslash); return the index after it.

    ECMA-262 lets a back-reference point at a group that is still open or comes later (it then
    matches the empty string); Python refuses both. A reference to a group the pattern has is
    therefore judged as an empty group; one to a group it lacks is left for Python to refuse, as
    ECMA-262 refuses it too (in Unicode mode, the mode JSON Schema validators use).
    """
    kind = pattern[i + 1]
    if kind in "123456789":
        number = re.match(r"\d+", pattern[i + 1 :])
        assert number is not None
        if int(number.group()) <= groups[0]:
            out.append("(?:)")
            return i + 1 + number.end()
    if kind in "pP" and pattern.startswith("{", i + 2) and (end := pattern.find("}", i + 3)) > 0:
        out.append(r"\w" if kind == "p" else r"\W")
        return end + 1
    if kind == "k" and pattern.startswith("<", i + 2) and (end := pattern.find(">", i + 3)) > 0:
        name = pattern[i + 3 : end]
        out.append("(?:)" if name in groups[1] else f"(?P={_python_name(name)})")
        return end + 1
    if kind == "u" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3 : end] if end > 0 else ""
        if digits and all(c in "0123456789abcdefABCDEF" for c in digits) and int(digits, 16) <= 0x10FFFF:
            out.append(f"\\U{int(digits, 16):08x}")
            return end + 1
    if kind == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        out.append(f"\\x{ord(pattern[i + 2]) % 32:02x}")
        return i + 3
    out.append(pattern[i : i + 2])
    return i + 2


def _python_name(name: str) -> str:
    """ECMA-262 group names may hold `$`; Python's may not. Same mapping at definition and use."""
    return name.replace("$", "_dollar_")


def is_ecma_regex(pattern: object) -> bool:
    """True unless `pattern` is a string that is not a regular expression (non-strings pass, as in
    every format checker: the type is another keyword's business)."""
    return _compiles(pattern) if isinstance(pattern, str) else True


@cache
def _compiles(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():  # "possible nested set" and the like: syntax Python may change
            warnings.simplefilter("ignore")
            re.compile(python_spelling(pattern))
    except (re.error, OverflowError, RecursionError):
        return False
    return True


# ------------------------------------------------------------------------------------ matching


@cache
def search_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled for `search` with ECMA-262's `$`: the end of the string, never before a
    final newline as Python's `$` allows (without this, "list\\n" would match `^[a-z]+$`).

    Raises `re.error` for a pattern Python cannot run (such as `\\p{L}`): matching it needs ECMA-262's
    engine, so callers must say they could not judge rather than guess.
    """
    out: list[str] = []
    in_class = escaped = False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif in_class:
            out.append(char)
            in_class = char != "]"
        elif char == "[":
            out.append(char)
            in_class = True
        elif char == "$":
            out.append(r"\Z")
        else:
            out.append(char)
    return re.compile("".join(out))


def _ecma_pattern(
    validator: Validator, pattern: str, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


#: Draft 2020-12 with ECMA-262 `$` semantics for `pattern`; everything else is jsonschema's own.
EcmaDraft202012Validator = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
