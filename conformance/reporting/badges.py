"""Badges per suite, derived from a canonical report: a shields.io endpoint JSON and a standalone SVG.

Why both: the endpoint JSON lets a README badge follow the latest published report through
shields.io's `endpoint` badge; the SVG needs no service at all (commit it, or attach it to a release).
The SVG draws its own text with a generic font and embeds nothing, so it renders offline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from conformance.model.verdicts import BLOCKING, Verdict, nothing_judged
from conformance.reporting.model import Report, coerce

COLORS = {
    "brightgreen": "#4c1",
    "green": "#97ca00",
    "yellowgreen": "#a4a61d",
    "yellow": "#dfb317",
    "red": "#e05d44",
    "lightgrey": "#9f9f9f",
}


def status(report: Report | Mapping[str, Any], suite: str) -> dict[str, Any]:
    """The badge for one suite: shields.io endpoint schema version 1 (label, message, color)."""
    model = coerce(report)
    cases = [c for c in model.cases if c.suite == suite]
    counts = Counter(c.gating for c in cases)
    blocking = sum(counts.get(v, 0) for v in BLOCKING)
    if not cases:
        message, color = "not run", "lightgrey"
    elif not model.footer.complete:
        message, color = "incomplete", "lightgrey"
    elif blocking:
        message, color = f"{blocking} failing", "red"
    elif nothing_judged(c.verdict for c in cases):
        message, color = "nothing judged", "lightgrey"  # every case SKIP: no claim to show
    elif counts.get(Verdict.WARN):
        message, color = f"passing, {counts[Verdict.WARN]} warnings", "yellow"
    elif counts.get(Verdict.XFAIL):
        message, color = f"passing, {counts[Verdict.XFAIL]} known failures", "yellowgreen"
    else:
        message, color = "passing", "brightgreen"
    return {"schemaVersion": 1, "label": f"MCP {suite}", "message": message, "color": color}


def _width(text: str) -> int:
    """Text width in pixels at 11px Verdana-like metrics (shields.io's), close enough for a badge."""
    narrow, wide = set("fijlrt.,:;!|' ()[]1"), set("mwMW@%")
    return int(sum(4 if ch in narrow else 10 if ch in wide else 7 for ch in text)) + 10


def svg(badge: dict[str, Any]) -> str:
    """A flat badge as a standalone SVG document (no external font, image or link)."""
    label, message = str(badge["label"]), str(badge["message"])
    color = COLORS.get(badge["color"], COLORS["lightgrey"])
    lw, mw = _width(label), _width(message)
    total = lw + mw
    title = escape(f"{label}: {message}")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{escape(title, {chr(34): "&quot;"})}"><title>{title}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{color}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'font-size="11">'
        f'<text x="{lw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{escape(label)}</text>'
        f'<text x="{lw / 2:.1f}" y="14">{escape(label)}</text>'
        f'<text x="{lw + mw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{escape(message)}</text>'
        f'<text x="{lw + mw / 2:.1f}" y="14">{escape(message)}</text></g></svg>\n'
    )


def badges(report: Report | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """One badge per suite of the report, by suite name."""
    model = coerce(report)
    suites = model.header.suites or sorted({c.suite for c in model.cases})
    return {suite: status(model, suite) for suite in suites}
