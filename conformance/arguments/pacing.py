"""Arguments sized so that a tool shows its progress and can be cancelled, within a bounded time.

Why: the careful candidates (`candidates.py`) are the simplest valid values, so a tool that counts or
sleeps is called with its minimum (`steps: 1`, `delay: 0`): one progress value, which shows no increase,
and an answer at once, which leaves nothing to cancel. A tool's own default can be as bad the other way
(server-everything's long-running operation: 10 s). So where an inputSchema has a numeric property
whose name says it counts steps or waits, the call that observes progress asks for a few steps and a
short wait instead, each within the schema's bounds and checked by its validator, and never more than a
given budget of seconds even if every wait is per step.

The names are a guess by nature; a wrong one costs a call that still answers (a listing of three items,
a conversion of 0.5 s) and changes no verdict on its own.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from jsonschema import validators

#: Steps asked of a tool that counts: two values to compare, and one more, so that a cancellation sent
#: after the first value still finds the call running.
STEPS = 3
#: The wait asked of a tool that sleeps, in seconds: long enough that a cancellation sent once the call
#: is seen running arrives while it still runs (a round trip on a loaded machine is milliseconds), short
#: enough that the calls of a run stay cheap.
PACE_SECONDS = 0.5

#: Words of a property name that say it counts (num_steps, stepCount, iterations, ...).
COUNT_WORDS = frozenset(
    {"steps", "step", "count", "n", "iterations", "iteration", "times", "repeat", "repeats", "rounds"}
    | {"ticks", "stages", "chunks", "updates", "loops", "cycles", "total", "increments", "messages"}
)
#: Words that say it waits, and those that name milliseconds rather than seconds.
WAIT_WORDS = frozenset(
    {"duration", "delay", "seconds", "second", "secs", "sec", "sleep", "wait", "interval", "pause"}
    | {"ms", "millis", "milliseconds", "millisecond", "period"}
)
MILLI_WORDS = frozenset({"ms", "millis", "milliseconds", "millisecond"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class Paced:
    """Arguments sized for observation, what was changed, and the longest the call should take."""

    arguments: dict[str, Any]
    #: The properties set, each as `name=value`, for a report line.
    changed: tuple[str, ...] = field(default=())
    #: Seconds the call takes at most if every wait is per step (0 when nothing waits).
    longest: float = 0.0

    def line(self) -> str:
        return ", ".join(self.changed)


def words(name: str) -> set[str]:
    """The lower-case words of a property name, whatever its case style (num_steps, stepCount, delay-ms)."""
    return {w.lower() for w in _WORD.findall(name)}


def paced(
    schema: Any,
    base: dict[str, Any],
    *,
    budget: float,
    count: int = STEPS,
    pace: float = PACE_SECONDS,
    waits_only: bool = False,
) -> Paced | None:
    """`base` with each counting property set to `count` and each waiting one to `pace` seconds (or as
    near as the schema allows), when the result is valid under `schema` and its longest run fits
    `budget` seconds; None when no property is of either kind, or when sizing them would not fit or
    validate. `waits_only`: None unless some property waits (a call made for its answer alone has no
    reason to change a count that does not multiply a wait)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    counts, waits = _kinds(properties)
    if not waits and (waits_only or not counts):
        return None
    arguments = dict(base)
    steps = 1
    for name in counts:
        value = _fit(properties[name], count)
        if value is not None:
            arguments[name] = value
            steps = max(steps, int(value))
    wait_seconds = 0.0
    for name in waits:
        milli = bool(words(name) & MILLI_WORDS) or "millisecond" in str(properties[name].get("description"))
        wanted = pace * 1000 if milli else pace
        value = _fit(properties[name], wanted)
        if value is None:
            continue
        seconds = float(value) / 1000 if milli else float(value)
        if seconds * steps > budget:
            continue  # the schema's least wait, if per step, would outlast the budget: leave it as drawn
        arguments[name] = value
        wait_seconds = max(wait_seconds, seconds)
    changed = [
        f"{n}={arguments[n]!r}" for n in (*counts, *waits) if n in arguments and arguments[n] != base.get(n)
    ]
    if not changed or not _valid(schema, arguments):
        return None
    return Paced(arguments, tuple(changed), wait_seconds * steps)


def _kinds(properties: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The numeric properties that count, and those that wait (a name with both, step_delay, waits)."""
    counts, waits = [], []
    for name, spec in properties.items():
        if not isinstance(spec, dict) or "enum" in spec or "const" in spec or not _numeric(spec):
            continue
        said = words(name)
        if said & WAIT_WORDS:
            waits.append(name)
        elif said & COUNT_WORDS:
            counts.append(name)
    return counts, waits


def _numeric(spec: dict[str, Any]) -> bool:
    kinds = spec.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return any(k in ("integer", "number") for k in kinds)


def _fit(spec: dict[str, Any], wanted: float) -> int | float | None:
    """`wanted` moved into the property's bounds (an integer property rounded up), or None when its
    bounds leave no such number."""
    integer = "integer" in (spec["type"] if isinstance(spec.get("type"), list) else [spec.get("type")])
    low, high = _bound(spec, "minimum"), _bound(spec, "maximum")
    above, below = _bound(spec, "exclusiveMinimum"), _bound(spec, "exclusiveMaximum")
    value: float = wanted
    if low is not None and value < low:
        value = low
    if above is not None and value <= above:
        value = above + (1 if integer else wanted)
    if high is not None and value > high:
        value = high
    if below is not None and value >= below:
        return None
    if integer:
        value = math.ceil(value)
        if high is not None and value > high:
            return None
        return int(value)
    return value


def _bound(spec: dict[str, Any], key: str) -> float | None:
    value = spec.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _valid(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        return bool(cls(schema).is_valid(arguments))
    except Exception:  # a schema its own validator cannot run: no sizing rather than a guess
        return False
