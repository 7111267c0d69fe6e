"""The harness's one RFC 8785 (JCS) implementation, `conformance.pack_api.jcs`, against RFC 8785's own
examples.

Every expected string below is RFC 8785's: the Appendix B number table (IEEE-754 bit patterns and
their ECMAScript text), the section 3.2.3 sorting example and the section 3.2.2 main example. Both
packs' digests are made from this text, so a wrong digit here would be a wrong verdict there.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest

from conformance.pack_api import jcs
from conformance_packs.map_review import jcs as map_jcs
from conformance_packs.uwmd import jcs as uwmd_jcs

#: RFC 8785 Appendix B: IEEE-754 double (hex bit pattern) -> its canonical JSON text.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]
#: Appendix B's two patterns without a JSON form: NaN and Infinity.
NOT_JSON = ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"]


def double(bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return value


@pytest.mark.parametrize(("bits", "text"), APPENDIX_B, ids=[b for b, _ in APPENDIX_B])
def test_appendix_b_numbers(bits: str, text: str) -> None:
    value = double(bits)
    assert jcs.number(value) == text
    assert jcs.canonicalize([value]) == f"[{text}]"
    assert float(text) == value or value == 0  # the text parses back to the same double


@pytest.mark.parametrize("bits", NOT_JSON)
def test_appendix_b_nan_and_infinity_are_refused(bits: str) -> None:
    value = double(bits)
    assert math.isnan(value) or math.isinf(value)
    with pytest.raises(jcs.CanonicalError):
        jcs.number(value)
    with pytest.raises(jcs.CanonicalError):
        jcs.canonicalize({"n": value})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (-1e-7, "-1e-7"),
        (1e-6, "0.000001"),
        (123e-20, "1.23e-18"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-0.0, "0"),
    ],
)
def test_ecmascript_number_forms(value: float, text: str) -> None:
    """ECMA-262 Number::toString's four layouts: whole, decimal point inside, leading zeros, exponent."""
    assert jcs.number(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2**53, "9007199254740992"),
        (-(2**53), "-9007199254740992"),
        (2**60, "1152921504606847000"),
        (2**68, "295147905179352830000"),
        (10**21, "1e+21"),
        (10**23, "1e+23"),
    ],
)
def test_integers_are_written_as_the_double_they_become(value: int, text: str) -> None:
    """JSON numbers are IEEE doubles (RFC 8785 section 3.2.2.3): an integer past 2**53 is the double
    JSON.parse makes of it, 2**60 included (map-review's old copy wrote all 19 digits)."""
    assert jcs.canonicalize(value) == text


def test_an_integer_beyond_the_double_range_is_refused() -> None:
    with pytest.raises(jcs.CanonicalError):
        jcs.canonicalize(10**400)


def test_section_3_2_3_sorting_example() -> None:
    """Keys sort by UTF-16 code units: the emoji (D83D DE00) before U+FB33, which code points reverse."""
    source = (
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", '
        '"1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", '
        '"\\u00f6": "Latin Small Letter O With Diaeresis"}'
    )
    assert jcs.canonicalize(json.loads(source)) == (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
    )


def test_section_3_2_2_main_example() -> None:
    source = (
        '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],'
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}'
    )
    assert jcs.canonicalize(json.loads(source)) == (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )


def test_strings_escape_only_quote_backslash_and_controls() -> None:
    """Section 3.2.2.2: short escapes where JSON has them, `\\u00xx` (lower case) for other controls,
    everything else (DEL, non-ASCII, `/`) as itself."""
    text = '\b\t\n\f\r"\\\x00\x1f\x7f/é\U0001f600'
    assert jcs.string(text) == '"\\b\\t\\n\\f\\r\\"\\\\\\u0000\\u001f\x7f/é\U0001f600"'


@pytest.mark.parametrize("bad", ["\ud800", {"k": "\udfff"}, {"\udc00": 1}, {1: 2}, object(), b"bytes"])
def test_values_without_a_canonical_form_are_refused(bad: Any) -> None:
    with pytest.raises(jcs.CanonicalError):
        jcs.canonicalize(bad)


def test_nesting_sorts_every_level_and_keeps_array_order() -> None:
    value = {"b": [{"z": 1, "a": 2}, 3], "a": {"d": True, "c": None}}
    assert jcs.canonicalize(value) == '{"a":{"c":null,"d":true},"b":[{"a":2,"z":1},3]}'


def test_both_packs_digest_the_same_jcs_text() -> None:
    """One implementation: the MAP and UW digests differ only in their prefix and what they leave out."""
    value = {"n": 2**60, "x": 1e21, "s": "€"}
    hex_digest = jcs.sha256_hex(value)
    assert map_jcs.digest(value) == "sha-256:" + hex_digest
    assert uwmd_jcs.semantic_digest({**value, "generator": "any"}) == "sha256:" + hex_digest
