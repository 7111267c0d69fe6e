"""The binding's six named views: CSV text (`field,value` rows) cut from one section of the envelope."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from conformance_reference.uwmd_codecs.jcs import es_number
from conformance_reference.uwmd_codecs.model import JSON, VIEWS, CodecError

__all__ = ["summary", "view_csv"]


def view_csv(envelope: JSON, view: str) -> str:
    """A named view as CSV text (`field,value` rows); 406 when the view's source section is absent."""
    if view not in VIEWS:
        raise CodecError(400, "BINDING_VIEW_UNKNOWN", "The view is not one of the binding's named views.")
    source = VIEWS[view]
    if source is None:
        fields = summary(envelope)
    else:
        block = envelope.get("sections", {}).get(source)
        if not isinstance(block, dict) or not block:
            raise CodecError(
                406,
                "BINDING_VIEW_UNAVAILABLE",
                f"The view {view} needs the section {source}, which this deal does not have.",
            )
        fields = dict(_view_fields(block))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\r\n")
    writer.writerow(("field", "value"))
    for key, value in _flatten("", fields):
        writer.writerow((key, value))
    return text.getvalue()


def summary(envelope: JSON) -> JSON:
    """The deal summary: the frontmatter's identifying fields and quick metrics, no prose."""
    front = envelope.get("frontmatter", {})
    keys = ("deal_id", "deal_name", "city", "state", "asset_class", "deal_stage", "status", "recommendation")
    out: JSON = {key: front[key] for key in keys if key in front}
    if isinstance(front.get("quick_metrics"), dict):
        out["quick_metrics"] = front["quick_metrics"]
    return out


def _view_fields(block: JSON) -> Iterator[tuple[str, Any]]:
    """A section's fields without its bookkeeping (`_meta`, `_notes`) or prose; variants prefixed."""
    if "content" in block and "annotation" in block:
        content = block.get("content")
        if isinstance(content, dict):
            for key, value in content.items():
                if not key.startswith("_"):
                    yield key, value
        return
    for variant, inner in block.items():
        if isinstance(inner, dict):
            for key, value in _view_fields(inner):
                yield f"{variant}.{key}", value


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(f"{prefix}.{key}" if prefix else key, item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _flatten(f"{prefix}.{index}", item)
    elif value is None:
        yield prefix, ""
    elif isinstance(value, bool):
        yield prefix, "true" if value else "false"
    elif isinstance(value, int | float):
        yield prefix, es_number(float(value)) if isinstance(value, float) else str(value)
    else:
        yield prefix, str(value)
