"""uw-xml: the envelope as namespaced XML, and its decoder that refuses any markup declaration.

No DTD, internal or external entity can be defined, let alone expanded (billion laughs, XXE): the text is
refused before the parser sees it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final
from xml.etree import ElementTree

from conformance_reference.uwmd_codecs.model import JSON, MAX_DEPTH, CodecError, number_value

__all__ = ["XML_NS", "decode_xml_text", "encode_xml", "xml_object"]

XML_NS: Final = "https://uwmd.org/ns/document/1"
#: `<!DOCTYPE`, `<!ENTITY`, `<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`: any markup declaration is refused.
_DECLARATION: Final = re.compile(r"<!\s*[A-Za-z]")
_XML_UNSAFE: Final = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\r")


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
    return xml_object(root, 0)


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


def xml_object(element: ElementTree.Element, depth: int) -> JSON:
    """An element's members as an object. No declaration check: `decode_xml_text` is the protected entry."""
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
        return xml_object(element, depth)
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
        return number_value(text.strip())
    if kind == "boolean" and text.strip() in ("true", "false"):
        return text.strip() == "true"
    if kind == "null":
        return None
    raise CodecError(
        422, "BINDING_XML_INVALID", "The uw-xml document has an element this codec does not know."
    )


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
