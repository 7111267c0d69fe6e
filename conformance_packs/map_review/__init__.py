"""The MAP publication-approval review suite (seed 000): read_review and decide_review.

Its check modules, in report order: the tool surface, reads, digests, decisions, then
races and the seed's golden p7 exchange last (the exchange resets the service's state).
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="map-review",
    package=__name__,
    description=(
        "MAP publication-approval review profile: read_review/decide_review, digests, decisions, races"
    ),
    checks=tuple(
        f"{__name__}.{module}" for module in ("surface", "read", "digest", "decide", "races", "golden")
    ),
    reference="conformance_reference.map_server",
    reference_forkserver="conformance_reference.forkserver",
    controller="conformance_reference.map_controller",
    since="2025-06-18",
    settings={"map": "urn:mcp-conformance:map-review-target:1"},
    order=20,
)
