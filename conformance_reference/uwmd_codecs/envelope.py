"""Envelopes: the shape every decoder enforces, the embedded digest, stamping, and `decode`, the one
place where stored bytes become an envelope.

The binding's security section says resource resolution "MUST apply the same codec size, UTF-8, XML
entity, digest, and ZIP extraction protections as file and HTTP entry points". The reference keeps every
stored deal as the bytes of one representation and decodes them on every access through `decode`, so no
entry point can skip a protection.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from conformance_reference.uwmd_codecs.jcs import semantic_digest
from conformance_reference.uwmd_codecs.model import (
    ENVELOPE_MEMBERS,
    GENERATOR,
    JSON,
    REPRESENTATIONS,
    VOLATILE,
    CodecError,
    limit,
    utf8,
)
from conformance_reference.uwmd_codecs.xml_codec import decode_xml_text, encode_xml
from conformance_reference.uwmd_codecs.zip_bundle import decode_bundle, encode_bundle

__all__ = ["blob", "check_envelope", "decode", "encode", "stamp", "verify_digest"]


def check_envelope(envelope: Any) -> JSON:
    """The minimal shape every decoder enforces before a document is served as a UW envelope."""
    if not isinstance(envelope, dict):
        raise CodecError(
            422, "BINDING_ENVELOPE_INVALID", "The document is not a UW Document Envelope object."
        )
    missing = [name for name in ENVELOPE_MEMBERS if name not in envelope]
    if missing:
        raise CodecError(
            422, "BINDING_ENVELOPE_INVALID", f"The envelope lacks required members: {', '.join(missing)}."
        )
    if envelope.get("envelope_version") != "1.0":
        raise CodecError(422, "BINDING_ENVELOPE_INVALID", "Only UW Document Envelope 1.0 is supported.")
    front = envelope.get("frontmatter")
    if not isinstance(front, dict) or not all(
        isinstance(front.get(k), str) for k in ("uw_version", "deal_id")
    ):
        raise CodecError(422, "BINDING_ENVELOPE_INVALID", "The frontmatter lacks uw_version or deal_id.")
    if not isinstance(envelope.get("sections"), dict):
        raise CodecError(422, "BINDING_ENVELOPE_INVALID", "The envelope's sections member is not an object.")
    return envelope


def verify_digest(envelope: JSON) -> str:
    """Recompute the digest; an embedded semantic_digest that disagrees is refused (HTTP binding §4)."""
    try:
        digest = semantic_digest(envelope)
    except (ValueError, TypeError) as exc:
        raise CodecError(
            422, "BINDING_ENVELOPE_INVALID", f"The envelope cannot be canonicalised: {exc}."
        ) from None
    embedded = envelope.get("semantic_digest")
    if embedded is not None and embedded != digest:
        raise CodecError(
            422, "BINDING_DIGEST_MISMATCH", "The document's semantic_digest does not match its content."
        )
    return digest


def stamp(envelope: JSON, generated_at: str) -> JSON:
    """The envelope with fresh generator fields and its digest, in the envelope's member order."""
    stable = {k: v for k, v in envelope.items() if k not in VOLATILE}
    digest = semantic_digest(stable)
    out: JSON = {}
    for key, value in stable.items():
        out[key] = value
        if key == "format_version":
            out["generated_at"] = generated_at
            out["generator"] = GENERATOR
    out.setdefault("generated_at", generated_at)
    out.setdefault("generator", GENERATOR)
    out["semantic_digest"] = digest
    return out


def decode(representation: str, body: bytes) -> tuple[JSON, str]:
    """Stored bytes of one representation -> (envelope, its verified semantic digest).

    Size first (before any parsing), then strict UTF-8, then the representation's own parser with its
    limits (no DTD or entity in XML; member paths, counts, sizes and ratios in ZIP), then the envelope's
    shape and its embedded digest.
    """
    if representation not in REPRESENTATIONS:
        raise CodecError(406, "REPRESENTATION_NOT_ACCEPTABLE", "The stored representation is not supported.")
    limit(representation, body)
    if representation == "uw-json":
        envelope = _decode_json(utf8(body, "uw-json document"))
    elif representation == "uw-xml":
        envelope = decode_xml_text(utf8(body, "uw-xml document"))
    else:
        envelope = decode_bundle(body)
    check_envelope(envelope)
    return envelope, verify_digest(envelope)


def _decode_json(text: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> JSON:
        out: JSON = {}
        for key, value in items:
            if key in out:
                raise CodecError(
                    422, "BINDING_JSON_INVALID", "The uw-json document repeats an object member."
                )
            out[key] = value
        return out

    def constant(name: str) -> Any:
        raise CodecError(422, "BINDING_JSON_INVALID", f"{name} is not a JSON number.")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except (ValueError, RecursionError):
        raise CodecError(422, "BINDING_JSON_INVALID", "The uw-json document is not valid JSON.") from None


def encode(representation: str, envelope: JSON) -> str | bytes:
    """The envelope (already stamped) as a representation's text (uw-json, uw-xml) or bytes (bundle)."""
    if representation == "uw-json":
        return json.dumps(envelope, ensure_ascii=False, indent=2) + "\n"
    if representation == "uw-xml":
        return encode_xml(envelope)
    if representation == "uw-csv-bundle":
        return encode_bundle(envelope)
    raise CodecError(406, "REPRESENTATION_NOT_ACCEPTABLE", "This representation is not supported.")


def blob(data: bytes) -> str:
    """Bytes as the base64 text of a blob resource (the bundle)."""
    return base64.b64encode(data).decode("ascii")
