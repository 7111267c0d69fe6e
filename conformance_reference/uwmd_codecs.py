"""Codecs of the reference UW Markdown binding: the semantic digest, the three model representations and
the six named CSV views, each decoder behind the same size, UTF-8, XML entity and ZIP extraction limits.

Why one module: the binding's security section says resource resolution "MUST apply the same codec size,
UTF-8, XML entity, digest, and ZIP extraction protections as file and HTTP entry points". The reference
keeps every stored deal as the bytes of one representation and decodes them on every access through
`decode`, so there is exactly one place where bytes become an envelope and no entry point can skip a
protection. Nothing here imports MCP or the harness: the digest below is the reference's own RFC 8785
implementation, written apart from the harness's (`suites/uwmd/jcs.py`) so that a bug in one cannot make
both agree; the project's tests hold both to the same vectors.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final
from xml.etree import ElementTree

JSON = dict[str, Any]

TEMPLATE: Final = "https://uwmd.org/deals/{deal_id}{?representation,view}"
BASE_URI: Final = "https://uwmd.org/deals/"
XML_NS: Final = "https://uwmd.org/ns/document/1"
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

# ZIP extraction limits: a bundle is refused before any member is inflated if it breaks one of these.
ZIP_MAX_MEMBERS: Final = 64
ZIP_MAX_TOTAL: Final = 8 * 1024 * 1024
ZIP_MAX_RATIO: Final = 100
#: Members smaller than this may compress better than the ratio limit (a short CSV of repeated zeros).
ZIP_RATIO_FLOOR: Final = 64 * 1024
MAX_DEPTH: Final = 64
_MEMBER_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
#: `<!DOCTYPE`, `<!ENTITY`, `<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`: any markup declaration is refused.
_DECLARATION: Final = re.compile(r"<!\s*[A-Za-z]")
_XML_UNSAFE: Final = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\r")
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


# --------------------------------------------------------------------------- RFC 8785 and the digest


def canonical_json(value: Any) -> str:
    """RFC 8785 (JCS) text: members sorted by UTF-16 code units, ECMAScript numbers, minimal escapes."""
    out: list[str] = []
    _canon(value, out, 0)
    return "".join(out)


def _canon(value: Any, out: list[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError("nesting too deep to canonicalise")
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        # ECMAScript numbers are doubles: integers past 2**53 are serialised as the double they become.
        out.append(str(value) if abs(value) <= 2**53 else es_number(float(value)))
    elif isinstance(value, float):
        out.append(es_number(value))
    elif isinstance(value, str):
        out.append(_es_string(value))
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _canon(item, out, depth + 1)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("object member names must be strings")
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_units)):
            if index:
                out.append(",")
            out.append(_es_string(key))
            out.append(":")
            _canon(value[key], out, depth + 1)
        out.append("}")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def _utf16_units(key: str) -> list[int]:
    data = key.encode("utf-16-be", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _es_string(text: str) -> str:
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[char])
        elif code < 0x20:
            parts.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError("a lone surrogate has no canonical form")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def es_number(value: float) -> str:
    """ECMAScript Number::toString for a finite double, from Python's shortest round-trip digits."""
    if not math.isfinite(value):
        raise ValueError("NaN and Infinity are not JSON numbers")
    if value == 0:
        return "0"
    negative = value < 0
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    if "." in mantissa:
        whole, fraction = mantissa.split(".")
    else:
        whole, fraction = mantissa, ""
    digits = whole + fraction
    # value = 0.<digits> * 10**point once leading zeros are gone
    point = len(whole) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + (("." + digits[1:]) if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))
    return ("-" if negative else "") + body


def semantic_digest(envelope: JSON) -> str:
    """`sha256:` + SHA-256 of the JCS form of the envelope without its volatile generator members."""
    stable = {key: value for key, value in envelope.items() if key not in VOLATILE}
    return "sha256:" + hashlib.sha256(canonical_json(stable).encode("utf-8")).hexdigest()


def etag(digest: str) -> str:
    """The strong entity tag of a deal: the quoted semantic digest (HTTP binding §4)."""
    return f'"{digest}"'


# --------------------------------------------------------------------------- URIs


def encode_deal_id(deal_id: str) -> str:
    """RFC 6570 simple expansion of {deal_id}: everything but the unreserved set is percent-encoded."""
    from urllib.parse import quote

    return quote(deal_id, safe="")


def resource_uri(deal_id: str, representation: str | None = None, view: str | None = None) -> str:
    """The template's expansion: the canonical URI for uw-json, a query for any other selection."""
    uri = BASE_URI + encode_deal_id(deal_id)
    if view is not None:
        return f"{uri}?view={view}"
    if representation not in (None, DEFAULT_REPRESENTATION):
        return f"{uri}?representation={representation}"
    return uri


@dataclass(frozen=True)
class Selection:
    deal_id: str
    representation: str
    view: str | None


def parse_uri(uri: str) -> Selection | None:
    """The deal and selection a resource URI names, or None when it is not a deal URI of this server.

    Only `https://uwmd.org/deals/<one percent-encoded segment>` with an optional `representation` and
    `view` query is a deal: a `file:` URI, a bare path, a second path segment (`/../`) or a fragment is
    never looked up anywhere, so no URI can reach the file system.
    """
    from urllib.parse import unquote

    if not uri.startswith(BASE_URI) or "#" in uri or len(uri) > 2048:
        return None
    path, _, query = uri[len(BASE_URI) :].partition("?")
    if not path or "/" in path or "\\" in path:
        return None
    try:
        deal_id = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return None
    if not deal_id or len(deal_id) > 200 or "\x00" in deal_id:
        return None
    params: dict[str, str] = {}
    if query:
        for pair in query.split("&"):
            key, sep, value = pair.partition("=")
            if not sep or key not in ("representation", "view") or key in params:
                return None
            try:
                params[key] = unquote(value, errors="strict")
            except UnicodeDecodeError:
                return None
    return Selection(deal_id, params.get("representation", DEFAULT_REPRESENTATION), params.get("view"))


# --------------------------------------------------------------------------- envelope shape


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


# --------------------------------------------------------------------------- decoding (every entry point)


def _limit(representation: str, body: bytes) -> None:
    limit = int(REPRESENTATIONS[representation]["max_bytes"])
    if len(body) > limit:
        raise CodecError(
            413,
            "BINDING_PAYLOAD_TOO_LARGE",
            f"The {representation} body exceeds the codec limit of {limit} bytes.",
        )


def _utf8(body: bytes, what: str) -> str:
    if body.startswith(b"\xef\xbb\xbf"):
        raise CodecError(422, "BINDING_INVALID_UTF8", f"The {what} starts with a byte order mark.")
    try:
        return body.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise CodecError(422, "BINDING_INVALID_UTF8", f"The {what} is not valid UTF-8.") from None


def decode(representation: str, body: bytes) -> tuple[JSON, str]:
    """Stored bytes of one representation -> (envelope, its verified semantic digest).

    Size first (before any parsing), then strict UTF-8, then the representation's own parser with its
    limits (no DTD or entity in XML; member paths, counts, sizes and ratios in ZIP), then the envelope's
    shape and its embedded digest.
    """
    if representation not in REPRESENTATIONS:
        raise CodecError(406, "REPRESENTATION_NOT_ACCEPTABLE", "The stored representation is not supported.")
    _limit(representation, body)
    if representation == "uw-json":
        envelope = _decode_json(_utf8(body, "uw-json document"))
    elif representation == "uw-xml":
        envelope = decode_xml_text(_utf8(body, "uw-xml document"))
    else:
        envelope = _decode_bundle(body)
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


def decode_xml_text(text: str) -> Any:
    """uw-xml text -> envelope. Any markup declaration is refused before the parser sees the text, so no
    DTD, internal or external entity can be defined, let alone expanded (billion laughs, XXE)."""
    if _DECLARATION.search(text):
        raise CodecError(
            422,
            "BINDING_XML_DTD_FORBIDDEN",
            "uw-xml documents must not contain a DTD or entity declarations.",
        )
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        raise CodecError(422, "BINDING_XML_INVALID", "The uw-xml document is not well-formed XML.") from None
    if root.tag != f"{{{XML_NS}}}document":
        raise CodecError(422, "BINDING_XML_INVALID", "The uw-xml root element is not uw:document.")
    return _xml_object(root, 0)


def _xml_name(element: ElementTree.Element) -> str:
    encoded = element.get("name-json")
    if encoded is not None:
        name = json.loads(encoded)
        if not isinstance(name, str):
            raise CodecError(422, "BINDING_XML_INVALID", "A uw-xml member name is not a string.")
        return name
    name = element.get("name")
    if name is None:
        raise CodecError(422, "BINDING_XML_INVALID", "A uw-xml object member has no name.")
    return name


def _xml_object(element: ElementTree.Element, depth: int) -> JSON:
    out: JSON = {}
    for child in element:
        name = _xml_name(child)
        if name in out:
            raise CodecError(422, "BINDING_XML_INVALID", "A uw-xml object repeats a member name.")
        out[name] = _xml_value(child, depth + 1)
    return out


def _xml_value(element: ElementTree.Element, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(422, "BINDING_XML_INVALID", "The uw-xml document nests too deeply.")
    kind = element.tag.removeprefix(f"{{{XML_NS}}}")
    text = element.text or ""
    if kind == "object":
        return _xml_object(element, depth)
    if kind == "array":
        return [_xml_value(child, depth + 1) for child in element]
    if kind == "string":
        if element.get("encoding") == "json":
            value = json.loads(text)
            if not isinstance(value, str):
                raise CodecError(422, "BINDING_XML_INVALID", "An encoded uw-xml string is not a string.")
            return value
        return text
    if kind == "number":
        return _number_value(text.strip())
    if kind == "boolean" and text.strip() in ("true", "false"):
        return text.strip() == "true"
    if kind == "null":
        return None
    raise CodecError(
        422, "BINDING_XML_INVALID", "The uw-xml document has an element this codec does not know."
    )


def _number_value(text: str) -> int | float:
    if not _NUMBER.match(text):
        raise CodecError(422, "BINDING_NUMBER_INVALID", "A number is not in JSON number syntax.")
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise CodecError(422, "BINDING_NUMBER_INVALID", "A number is out of the double range.")
    return value


def _decode_bundle(body: bytes) -> Any:
    """uw-csv-bundle bytes -> envelope, refusing before inflation: too many members, a member path that
    is not a plain relative name (`../`, absolute, backslash, drive), a declared size or a compression
    ratio over the limits; then inflating with a hard cap, because declared sizes can lie."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
    except (zipfile.BadZipFile, ValueError, OSError):
        raise CodecError(
            422, "BINDING_ZIP_INVALID", "The uw-csv-bundle is not a readable ZIP archive."
        ) from None
    with archive:
        members = archive.infolist()
        if len(members) > ZIP_MAX_MEMBERS:
            raise CodecError(422, "BINDING_ZIP_LIMIT", "The uw-csv-bundle has too many members.")
        names: set[str] = set()
        total = 0
        for info in members:
            check_member_name(info.filename)
            if info.filename in names:
                raise CodecError(422, "BINDING_ZIP_MEMBER_PATH", "The uw-csv-bundle repeats a member name.")
            names.add(info.filename)
            total += info.file_size
            if total > ZIP_MAX_TOTAL:
                raise CodecError(
                    422, "BINDING_ZIP_LIMIT", "The uw-csv-bundle inflates beyond the size limit."
                )
            ratio_base = max(info.compress_size, 1)
            if info.file_size > ZIP_RATIO_FLOOR and info.file_size / ratio_base > ZIP_MAX_RATIO:
                raise CodecError(
                    422,
                    "BINDING_ZIP_RATIO",
                    f"A uw-csv-bundle member compresses more than {ZIP_MAX_RATIO}:1.",
                )
        files: dict[str, str] = {}
        budget = ZIP_MAX_TOTAL
        for info in members:
            data = _inflate(archive, info, min(info.file_size, budget))
            budget -= len(data)
            files[info.filename] = _utf8(data, "uw-csv-bundle member")
    return bundle_to_envelope(files)


def check_member_name(name: str) -> None:
    """A bundle member is a plain file name: no directories, no `..`, no absolute or drive paths."""
    if not _MEMBER_NAME.match(name) or ".." in name:
        raise CodecError(
            422, "BINDING_ZIP_MEMBER_PATH", "A uw-csv-bundle member path is not a plain file name."
        )


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    try:
        with archive.open(info) as stream:
            data = stream.read(cap + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError):
        raise CodecError(422, "BINDING_ZIP_INVALID", "A uw-csv-bundle member cannot be inflated.") from None
    if len(data) > cap:
        raise CodecError(
            422, "BINDING_ZIP_LIMIT", "A uw-csv-bundle member inflates beyond its declared size."
        )
    return data


# --------------------------------------------------------------------------- encoding


def encode(representation: str, envelope: JSON) -> str | bytes:
    """The envelope (already stamped) as a representation's text (uw-json, uw-xml) or bytes (bundle)."""
    if representation == "uw-json":
        return json.dumps(envelope, ensure_ascii=False, indent=2) + "\n"
    if representation == "uw-xml":
        return encode_xml(envelope)
    if representation == "uw-csv-bundle":
        return encode_bundle(envelope)
    raise CodecError(406, "REPRESENTATION_NOT_ACCEPTABLE", "This representation is not supported.")


def encode_xml(envelope: JSON) -> str:
    root = ElementTree.Element(
        f"{{{XML_NS}}}document", {"envelope_version": str(envelope["envelope_version"])}
    )
    for key, value in envelope.items():
        root.append(_xml_element(key, value))
    ElementTree.register_namespace("uw", XML_NS)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _xml_element(name: str | None, value: Any) -> ElementTree.Element:
    attributes: dict[str, str] = {}
    if name is not None:
        if _XML_UNSAFE.search(name):
            attributes["name-json"] = json.dumps(name)
        else:
            attributes["name"] = name
    if isinstance(value, dict):
        element = ElementTree.Element(f"{{{XML_NS}}}object", attributes)
        for key, item in value.items():
            element.append(_xml_element(key, item))
    elif isinstance(value, list):
        element = ElementTree.Element(f"{{{XML_NS}}}array", attributes)
        for item in value:
            element.append(_xml_element(None, item))
    elif isinstance(value, str):
        element = ElementTree.Element(f"{{{XML_NS}}}string", attributes)
        if _XML_UNSAFE.search(value):
            # Characters XML cannot carry (controls; CR, which parsers normalise) are kept exactly as a
            # JSON string literal.
            element.set("encoding", "json")
            element.text = json.dumps(value)
        else:
            element.text = value
    elif value is None:
        element = ElementTree.Element(f"{{{XML_NS}}}null", attributes)
    elif isinstance(value, bool):
        element = ElementTree.Element(f"{{{XML_NS}}}boolean", attributes)
        element.text = "true" if value else "false"
    elif isinstance(value, int | float):
        element = ElementTree.Element(f"{{{XML_NS}}}number", attributes)
        element.text = repr(value) if isinstance(value, float) else str(value)
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")
    return element


#: Bundle members, one per envelope member: every node as a row (JSON pointer, kind, value).
BUNDLE_MANIFEST: Final = "manifest.csv"


def encode_bundle(envelope: JSON) -> bytes:
    """A lossless CSV bundle: `manifest.csv` plus one CSV per envelope member, each node one row."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        manifest = [
            ("representation", "uw-csv-bundle"),
            ("representation_version", REPRESENTATION_VERSION),
            ("envelope_version", str(envelope.get("envelope_version", ""))),
            ("semantic_digest", str(envelope.get("semantic_digest", ""))),
        ]
        _write_member(archive, BUNDLE_MANIFEST, [("key", "value"), *manifest])
        for key, value in envelope.items():
            rows = [("pointer", "kind", "value"), *_rows("/" + _pointer_token(key), value)]
            _write_member(archive, f"{_member_stem(key)}.csv", rows)
    return buffer.getvalue()


def _member_stem(key: str) -> str:
    return key if re.fullmatch(r"[a-z][a-z0-9_]{0,60}", key) else "m_" + key.encode("utf-8").hex()[:60]


def _write_member(archive: zipfile.ZipFile, name: str, rows: Sequence[Sequence[str]]) -> None:
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n").writerows(rows)
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text.getvalue().encode("utf-8"))


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _rows(pointer: str, value: Any) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, dict):
        yield pointer, "object", ""
        for key, item in value.items():
            yield from _rows(f"{pointer}/{_pointer_token(key)}", item)
    elif isinstance(value, list):
        yield pointer, "array", ""
        for index, item in enumerate(value):
            yield from _rows(f"{pointer}/{index}", item)
    elif isinstance(value, str):
        yield pointer, "string", value
    elif value is None:
        yield pointer, "null", ""
    elif isinstance(value, bool):
        yield pointer, "boolean", "true" if value else "false"
    else:
        yield pointer, "number", repr(value) if isinstance(value, float) else str(value)


def bundle_to_envelope(files: dict[str, str]) -> JSON:
    """Rebuild the envelope from the rows of every member but the manifest (containers before children)."""
    root: JSON = {}
    for name in sorted(files):
        if name == BUNDLE_MANIFEST:
            continue
        reader = csv.reader(io.StringIO(files[name], newline=""))
        header = next(reader, None)
        if header != ["pointer", "kind", "value"]:
            raise CodecError(
                422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle member has an unexpected header."
            )
        for row in reader:
            if len(row) != 3:
                raise CodecError(
                    422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row does not have three cells."
                )
            _place(root, row[0], _cell(row[1], row[2]))
    return root


def _cell(kind: str, text: str) -> Any:
    if kind == "object":
        return {}
    if kind == "array":
        return []
    if kind == "string":
        return text
    if kind == "null":
        return None
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    if kind == "number":
        return _number_value(text)
    raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row has an unknown kind.")


def _place(root: JSON, pointer: str, value: Any) -> None:
    if not pointer.startswith("/"):
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle pointer is not absolute.")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    if len(tokens) > MAX_DEPTH:
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle pointer nests too deeply.")
    parent: Any = root
    for token in tokens[:-1]:
        parent = parent.get(token) if isinstance(parent, dict) else _index(parent, token)
        if not isinstance(parent, dict | list):
            raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row has no parent container.")
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last == str(len(parent)):
        parent.append(value)
    else:
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle array row is out of order.")


def _index(items: Any, token: str) -> Any:
    if isinstance(items, list) and token.isdigit() and int(token) < len(items):
        return items[int(token)]
    return None


# --------------------------------------------------------------------------- named views


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


def blob(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
