"""The fuzz pack's own command-line options: parsed and checked without importing the checks."""

from __future__ import annotations

import json
import random
from typing import Any

MODES = ("valid", "invalid")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError("must be 1 or more")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError("must be positive")
    return value


def seed(value: int | None) -> int:
    """The run's one seed: the given one, else one drawn now, so the report can record it."""
    return random.SystemRandom().randrange(2**32) if value is None else value


def replay(text: str) -> str:
    parse_replay(text)
    return text


def parse_replay(text: str) -> dict[str, Any]:
    """The `--fuzz-replay` case: {"tool", "mode", "arguments"[, "keyword", "pointer", "detail"]}."""
    try:
        case = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--fuzz-replay is not JSON: {exc}") from None
    if not isinstance(case, dict) or not isinstance(case.get("tool"), str):
        raise ValueError('--fuzz-replay needs a JSON object with "tool", "mode" and "arguments"')
    if not isinstance(case.get("arguments"), dict):
        raise ValueError('--fuzz-replay: "arguments" must be a JSON object')
    if case.get("mode", "valid") not in MODES:
        raise ValueError('--fuzz-replay: "mode" must be "valid" or "invalid"')
    return case
