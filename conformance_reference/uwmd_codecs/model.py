"""What every codec of the reference UW binding shares: the representations, the views, the limits, the
one error type, and the first two checks every decoder applies to bytes (size, then strict UTF-8).

Nothing here imports MCP or the harness.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

JSON = dict[str, Any]

GENERATOR: Final = "mcp-conformance uwmd reference"
CSV_MEDIA_TYPE: Final = "text/csv; charset=utf-8"
DEFAULT_REPRESENTATION: Final = "uw-json"
#: The model representations in the order list_representations gives them.
REPRESENTATIONS: Final[dict[str, JSON]] = {
    "uw-json": {
        "media_type": "application/vnd.uwmd.document+json",
        "extension": ".uw.json",
        "max_bytes": 1024 * 1024,
        "text": True,
    },
    "uw-xml": {
        "media_type": "application/vnd.uwmd.document+xml",
        "extension": ".uw.xml",
        "max_bytes": 2 * 1024 * 1024,
        "text": True,
    },
    "uw-csv-bundle": {
        "media_type": "application/vnd.uwmd.csv-bundle+zip",
        "extension": ".uw.csv.zip",
        "max_bytes": 2 * 1024 * 1024,
        "text": False,
    },
}
REPRESENTATION_VERSION: Final = "1.0.0"
#: Named views and the envelope section each is cut from (None: the frontmatter, always present).
VIEWS: Final[dict[str, str | None]] = {
    "deal_summary": None,
    "rent_roll": "rent_roll",
    "operating_statement": "operating_statement",
    "debt": "debt_structure",
    "valuation": "valuation",
    "sources_uses": "sources_uses",
}
#: The volatile members the semantic digest leaves out (HTTP binding: "excludes volatile generator fields").
VOLATILE: Final = ("generated_at", "generator", "semantic_digest")
ENVELOPE_MEMBERS: Final = (
    "envelope_version",
    "format_version",
    "frontmatter",
    "sections",
    "pipeline_log",
    "custom_calculations",
    "custom_scenarios",
    "extensions",
    "superseded",
)
#: Deepest nesting any codec follows (JCS, uw-xml, bundle pointers).
MAX_DEPTH: Final = 64
_NUMBER: Final = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$")


class CodecError(Exception):
    """Bytes that cannot become an envelope safely, or a selection that cannot be served.

    Carries the HTTP-equivalent status and a code the catalog's C-2 table maps; the message never
    quotes the offending bytes, so an error cannot echo a document's confidential body.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def limit(representation: str, body: bytes) -> None:
    limit = int(REPRESENTATIONS[representation]["max_bytes"])
    if len(body) > limit:
        raise CodecError(
            413,
            "BINDING_PAYLOAD_TOO_LARGE",
            f"The {representation} body exceeds the codec limit of {limit} bytes.",
        )


def utf8(body: bytes, what: str) -> str:
    if body.startswith(b"\xef\xbb\xbf"):
        raise CodecError(422, "BINDING_INVALID_UTF8", f"The {what} starts with a byte order mark.")
    try:
        return body.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise CodecError(422, "BINDING_INVALID_UTF8", f"The {what} is not valid UTF-8.") from None


def number_value(text: str) -> int | float:
    if not _NUMBER.match(text):
        raise CodecError(422, "BINDING_NUMBER_INVALID", "A number is not in JSON number syntax.")
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise CodecError(422, "BINDING_NUMBER_INVALID", "A number is out of the double range.")
    return value
