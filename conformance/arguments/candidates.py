"""The few arguments the base suite tries on a tool: what a careful client would send, deterministic.

A tool called with arguments it cannot accept (the string "x" as a time zone) answers with an error, and
every check that needs a successful result is left unjudged. So each candidate is the simplest example
of `Model.careful(rank)` for ranks 0, 1, 2: the schema's own hints first (enum, const, default,
examples, a description's quoted values and placeholders), ordinary values after, each checked by the
schema's validator. hypothesis draws them derandomized, so a run sends the same arguments every time.

A schema the converter cannot honour (allOf, not, ...) still gets `{}` when its validator admits it.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
from dataclasses import dataclass
from typing import Any

from jsonschema import validators

from conformance.arguments.home import hypothesis_home
from conformance.arguments.strategies import Unsupported, build

#: Candidates per tool: each one is a call, tried until one succeeds.
CANDIDATES = 3


@dataclass(frozen=True)
class Candidates:
    """The arguments to try, in order; `problem` says why there are none (or only the fallback)."""

    arguments: tuple[str, ...]
    problem: str = ""

    def values(self) -> list[dict[str, Any]]:
        """Fresh copies: a check may change the arguments it sends (leave out a required one)."""
        return [json.loads(text) for text in self.arguments]


def candidates(schema: Any, count: int = CANDIDATES) -> Candidates:
    """Up to `count` distinct valid arguments for `schema`, the likeliest to succeed first.

    Cached per schema: the base suite asks again in every revision, and many tools share one schema.
    """
    return drawing(schema, count).all()


def drawing(schema: Any, count: int = CANDIDATES) -> Drawing:
    """The candidates of `schema`, drawn one rank at a time as they are asked for (`Drawing.get`)."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return Drawing.empty("the inputSchema is not JSON")
    return _candidates(key, count)


@functools.lru_cache(maxsize=1024)
def _candidates(key: str, count: int) -> Drawing:
    return Drawing(json.loads(key), count)


class Drawing:
    """The candidates of one schema, each rank drawn only when a caller gets that far.

    Why lazy: drawing a rank is hypothesis's work, about 5 ms of CPU, and a tool that accepts its
    first candidate (nearly every tool) never needs the next two, so a server with 5,000 tools costs a
    third of the drawing. The sequence is the one an eager draw gives, cut where the caller stopped.
    Thread-safe: sweeps draw in worker threads, and two of them (`-j 2`) may share a schema.
    """

    def __init__(self, schema: Any, count: int) -> None:
        self._schema = schema
        self._count = count
        self._lock = threading.Lock()
        self._model: Any = None
        self._rank = 0
        self._found: list[str] = []
        self._seen: set[str] = set()
        self._problem = ""
        self._done = False

    @classmethod
    def empty(cls, problem: str) -> Drawing:
        out = cls(None, 0)
        out._problem, out._done = problem, True
        return out

    def ready(self, index: int) -> bool:
        """Whether `get(index)` answers without drawing (so a caller need not hand it to a thread)."""
        return index < len(self._found) or self._done

    def get(self, index: int) -> str | None:
        """The `index`-th candidate as JSON text, drawing further ranks as needed; None past the last."""
        with self._lock:
            while len(self._found) <= index and not self._done:
                self._draw_next()
            return self._found[index] if index < len(self._found) else None

    @property
    def problem(self) -> str:
        """Why there are no candidates (or only the fallback): settled once the first is drawn."""
        self.get(0)
        return self._problem

    def all(self) -> Candidates:
        self.get(self._count)
        return Candidates(tuple(self._found), self._problem)

    def _finish(self, problem: str = "") -> None:
        self._done = True
        if not self._found:
            self._problem = problem or "no arguments valid under the inputSchema could be built"

    def _fall_back(self, why: str) -> None:
        fallback = _fallback(self._schema, why)
        self._found, self._problem, self._done = list(fallback.arguments), fallback.problem, True

    def _draw_next(self) -> None:
        if self._model is None:
            try:
                self._model = build(self._schema)
            except Unsupported as exc:
                self._fall_back(str(exc))
                return
        if self._rank >= self._count:
            self._finish()
            return
        rank, self._rank = self._rank, self._rank + 1
        try:
            value = simplest(self._model.careful(rank))
        except Exception as exc:  # hypothesis cannot draw from it (a regex construct it lacks, say)
            if self._found:
                self._finish()
            else:
                self._fall_back(f"no arguments could be drawn ({type(exc).__name__}: {exc})"[:300])
            return
        if value is None:
            self._finish()
            return
        canonical = json.dumps(value, sort_keys=True)
        if canonical not in self._seen:
            self._seen.add(canonical)
            self._found.append(json.dumps(value, ensure_ascii=False))


def _fallback(schema: Any, why: str) -> Candidates:
    """`{}` for a schema the converter cannot honour, when its own validator admits it."""
    if isinstance(schema, dict):
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            if cls(schema).is_valid({}):
                return Candidates(("{}",), f"{why}; only {{}} is tried")
        except Exception:  # a schema the validator cannot run: no arguments rather than a guess
            pass
    return Candidates((), why)


def simplest(strategy: Any) -> Any:
    """hypothesis's simplest example of `strategy`, derandomized; None when it has no valid example."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.errors import Unsatisfiable

    drawn: list[Any] = []

    @settings(
        database=None,
        max_examples=1,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(strategy)
    def draw(value: Any) -> None:
        if not drawn:
            drawn.append(copy.deepcopy(value))

    try:
        with hypothesis_home():
            draw()
    except Unsatisfiable:
        return None
    return drawn[0] if drawn else None
