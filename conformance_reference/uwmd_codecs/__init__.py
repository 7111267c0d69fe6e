"""Codecs of the reference UW Markdown binding: the semantic digest, the three model representations and
the six named CSV views, each decoder behind the same size, UTF-8, XML entity and ZIP extraction limits.

One module a job: `model` (representations, views, limits, `CodecError`), `jcs` (the reference's own
RFC 8785 and the semantic digest), `uris` (the deal URI template and parser), `envelope` (shape,
digest, stamping and `decode`, the one place where stored bytes become an envelope), `xml_codec`
(uw-xml), `zip_bundle` (uw-csv-bundle) and `views` (the named CSV views). This package re-exports
the public names, so a server reads `codecs.decode(...)` as before. Nothing here imports MCP or the
harness: the JCS in `jcs` is written apart from the harness's (`conformance/pack_api/jcs.py`) so that a bug in
one cannot make both agree; the project's tests hold both to the same vectors.

A rule a test mutant changes must be changed where it is used: `envelope.limit`,
`envelope.verify_digest`, `uris.encode_deal_id`, `xml_codec.XML_NS`.
"""

from __future__ import annotations

from conformance_reference.uwmd_codecs.envelope import (
    blob,
    check_envelope,
    decode,
    encode,
    stamp,
    verify_digest,
)
from conformance_reference.uwmd_codecs.jcs import canonical_json, es_number, etag, semantic_digest
from conformance_reference.uwmd_codecs.model import (
    CSV_MEDIA_TYPE,
    DEFAULT_REPRESENTATION,
    ENVELOPE_MEMBERS,
    GENERATOR,
    JSON,
    MAX_DEPTH,
    REPRESENTATION_VERSION,
    REPRESENTATIONS,
    VIEWS,
    VOLATILE,
    CodecError,
)
from conformance_reference.uwmd_codecs.uris import (
    BASE_URI,
    TEMPLATE,
    Selection,
    encode_deal_id,
    parse_uri,
    resource_uri,
)
from conformance_reference.uwmd_codecs.views import summary, view_csv
from conformance_reference.uwmd_codecs.xml_codec import XML_NS, decode_xml_text, encode_xml, xml_object
from conformance_reference.uwmd_codecs.zip_bundle import (
    BUNDLE_MANIFEST,
    bundle_to_envelope,
    check_member_name,
    encode_bundle,
)

__all__ = [
    "BASE_URI",
    "BUNDLE_MANIFEST",
    "CSV_MEDIA_TYPE",
    "DEFAULT_REPRESENTATION",
    "ENVELOPE_MEMBERS",
    "GENERATOR",
    "JSON",
    "MAX_DEPTH",
    "REPRESENTATIONS",
    "REPRESENTATION_VERSION",
    "TEMPLATE",
    "VIEWS",
    "VOLATILE",
    "XML_NS",
    "CodecError",
    "Selection",
    "blob",
    "bundle_to_envelope",
    "canonical_json",
    "check_envelope",
    "check_member_name",
    "decode",
    "decode_xml_text",
    "encode",
    "encode_bundle",
    "encode_deal_id",
    "encode_xml",
    "es_number",
    "etag",
    "parse_uri",
    "resource_uri",
    "semantic_digest",
    "stamp",
    "summary",
    "verify_digest",
    "view_csv",
    "xml_object",
]
