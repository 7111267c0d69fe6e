"""The cap on JSON values per message (`conformance.protocol.jsonrpc.values_in`): an upper bound on the
values a message holds, exact for compact JSON once strings are looked at, so a message the cap
refuses really holds that many values and one it lets through is parsed within a known memory cost.
The hostile servers that send such messages are in tests/engine/test_chaos.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.protocol import jsonrpc
from conformance.protocol.jsonrpc import classify, values_in

#: Strings full of what the counting looks at: delimiters, quotes, backslashes, empty brackets.
TRICKY = st.text(alphabet='[]{},:"\\ab \u00e9', max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TRICKY,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TRICKY, inner, max_size=5),
    max_leaves=40,
)


def values(value: Any) -> int:
    """The JSON values in `value`, object keys counted (as `values_in` counts them)."""
    if isinstance(value, list):
        return 1 + sum(values(v) for v in value)
    if isinstance(value, dict):
        return 1 + len(value) + sum(values(v) for v in value.values())
    return 1


@given(JSON, st.booleans())
def test_the_quick_count_never_undercounts(value: Any, compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    raw = json.dumps(value, separators=separators, ensure_ascii=False).encode()
    assert values_in(raw) >= values(value)


@given(JSON)
def test_the_close_count_is_exact_for_compact_json(value: Any) -> None:
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    strings = raw.replace(b"\\\\", b"").replace(b'\\"', b"").count(b'"') // 2
    assume(jsonrpc.values_in(raw) > strings)  # the quick count can pass a cap of `strings`
    with pytest.MonkeyPatch.context() as patch:
        # A cap the quick count passes and the strings do not: the strings are cut out and counted.
        patch.setattr(jsonrpc, "MAX_VALUES", strings)
        assert values_in(raw) == values(value)


def test_a_message_past_the_cap_is_refused_unparsed_and_one_under_it_is_parsed() -> None:
    cap = jsonrpc.MAX_VALUES

    def message(n: int) -> bytes:
        return b'{"jsonrpc":"2.0","id":1,"result":{"pad":[' + b",".join([b"0"] * n) + b"]}}"

    under = classify(message(cap - 20))  # the envelope holds a few values of its own
    assert under.kind == "response" and len(under.value["result"]["pad"]) == cap - 20
    over = classify(message(cap + 1))
    assert over.kind == "garbage" and over.value is None
    assert over.extra["values"] > cap and over.extra["oversize"] == len(over.raw)
    assert "exceeded the harness's cap" in over.problem


def test_a_long_text_full_of_delimiters_is_one_value() -> None:
    """A 16 MB text resource of CSV is one string: its commas are text, and it is parsed."""
    text = 'a,b:[c]{d}\\",' * 1_000_000
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"text": text}]}}).encode()
    frame = classify(raw)
    assert frame.kind == "response" and frame.value["result"]["contents"][0]["text"] == text


def test_a_message_nested_past_the_parser_is_refused_as_a_cap_not_read_as_garbage() -> None:
    """JSON sets no depth limit and the parser has one (RFC 8259 lets it): 100,000 nested arrays are an
    answer the harness cannot read, refused like one past the byte cap (the request it answers fails at
    once, an ERROR naming the cap), never a line that is not JSON."""
    raw = b'{"jsonrpc":"2.0","id":1,"result":{"tools":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    frame = classify(raw)
    assert frame.kind == "garbage" and frame.value is None
    assert frame.extra == {"oversize": len(raw), "depth": True}
    assert "nested deeper than the harness's JSON parser reads" in frame.problem
