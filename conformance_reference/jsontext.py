"""The one text rendering of structured content shared by every reference server (and their state
modules, which must not import the SDK): compact JSON, keys in insertion order, UTF-8 kept as is.

A tool result's text block is this rendering of its structuredContent, so the two can never disagree.
"""

from __future__ import annotations

import json
from typing import Any


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
