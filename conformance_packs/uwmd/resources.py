"""UWMD-RES and SCOPE rows: deal URIs, representations, views, MIME types, bundles, the envelope digest.

Reads go through `resources/read` on the template's expansions and through `uwmd.get_document`; the
harness decodes what it can decode without trusting the server (JSON, the ZIP directory, the XML root, but
refuses any DTD before its own parser sees the text) and recomputes the semantic digest with its own JCS.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import zipfile
from typing import Any
from xml.etree import ElementTree

from conformance.pack_api import CaseContext, bytes_text, missed, skip
from conformance_packs.uwmd import jcs
from conformance_packs.uwmd.common import (
    CSV_MEDIA,
    GET,
    MEDIA,
    MODELS,
    VIEWS,
    XML_NS,
    Deal,
    Reply,
    accepted_uris,
    contents,
    current_digest,
    deal_uri,
    deal_vectors,
    expect_refused,
    expect_status,
    expect_success,
    fx_optional,
    load,
    read,
    schema_problems,
    shared_deal,
    tool,
    uwmd_check,
)

#: The catalog's Parkview golden digest (uw_2026_a3f9b1 at UWMD-OSP/UW-Markdown@626b5e3).
PARKVIEW_DIGEST = "sha256:98cf81a8927d6449fee516f0412f76df43b20b54bf49d89ffbd0ddd10b5b9fb7"
_DECLARATION = re.compile(r"<!\s*[A-Za-z]")


def only_item(reply: Reply, what: str) -> dict[str, Any]:
    """The one content item of a successful read."""
    expect_success(reply, what)
    items = contents(reply)
    if len(items) != 1:
        missed(f"{what}: expected exactly one content item, got {len(items)}", **reply.excerpt())
    return items[0]


def xml_root(text: str) -> tuple[str | None, str]:
    """The root element's {namespace}name of an XML text, refusing DTDs before parsing (the harness's own
    protection against what it reads); (None, why) when it cannot be read."""
    if _DECLARATION.search(text):
        return None, "it declares a DTD or an entity, which the harness does not parse"
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        return None, f"it is not well-formed XML ({exc})"
    return root.tag, ""


def zip_names(data: bytes) -> tuple[list[str] | None, str]:
    """The member names of a ZIP (its central directory only: nothing is inflated)."""
    if not data.startswith(b"PK\x03\x04"):
        return None, f"the bytes start `{bytes_text(data[:4])}`, not `PK\\x03\\x04`"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist(), ""
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        return None, f"the bytes do not open as a ZIP ({exc})"


@uwmd_check(
    "uwmd.res.canonical-uri", "UWMD-RES-001", "resource_uri is https://uwmd.org/deals/ + the encoded id"
)
async def canonical_uri(ctx: CaseContext) -> None:
    deals = [await shared_deal(ctx)]
    fixture = await fx_optional(ctx)
    if fixture is not None and fixture.has("load_deal"):
        deals.append(await load(ctx, "deal-1", odd_id=True))
    else:
        ctx.note("no load_deal: an id with a space and a slash was not tried")
    for deal in deals:
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id})
        sc = expect_success(reply, f"get_document of {deal.deal_id!r}")
        if sc.get("resource_uri") not in accepted_uris(deal.deal_id):
            missed(
                f"resource_uri for deal {deal.deal_id!r} is {sc.get('resource_uri')!r}, not {deal.uri!r}",
                **reply.excerpt(),
            )
    ctx.note("ids tried: " + ", ".join(repr(d.deal_id) for d in deals))


@uwmd_check(
    "uwmd.res.default-representation", "UWMD-RES-003", "the canonical URI and get_document default to uw-json"
)
async def default_representation(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    reply = await read(ctx, deal.uri)
    item = only_item(reply, f"resources/read {deal.uri}")
    if item.get("mimeType") != MEDIA["uw-json"] or not isinstance(item.get("text"), str):
        missed(
            f"the canonical read has mimeType {item.get('mimeType')!r} and "
            f"{'a text' if isinstance(item.get('text'), str) else 'no text'} member; expected uw-json text",
            **reply.excerpt(),
        )
    doc = await tool(ctx, GET, {"deal_id": deal.deal_id})
    sc = expect_success(doc, "get_document{deal_id}")
    if sc.get("representation_id") != "uw-json":
        missed(f"get_document without representation gives {sc.get('representation_id')!r}", **doc.excerpt())


@uwmd_check(
    "uwmd.res.model-representations",
    "UWMD-RES-004",
    "uw-json, uw-xml, uw-csv-bundle are served, uw-pdf is not",
)
async def model_representations(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for representation in ("uw-xml", "uw-csv-bundle"):
        reply = await read(ctx, deal_uri(deal.deal_id, representation))
        expect_success(reply, f"resources/read ?representation={representation}")
        if not contents(reply):
            missed(f"resources/read ?representation={representation} returned no contents", **reply.excerpt())
    for representation in MODELS:
        expect_success(
            await tool(ctx, GET, {"deal_id": deal.deal_id, "representation": representation}),
            f"get_document representation {representation}",
        )
    expect_refused(
        await tool(ctx, GET, {"deal_id": deal.deal_id, "representation": "uw-pdf"}), "get_document uw-pdf"
    )
    expect_refused(await read(ctx, deal_uri(deal.deal_id, "uw-pdf")), "resources/read ?representation=uw-pdf")


@uwmd_check(
    "uwmd.res.views", "UWMD-RES-005", "the six named views are served as views, an unknown one is not"
)
async def named_views(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for view in VIEWS:
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id, "view": view})
        sc = expect_success(reply, f"get_document view {view}")
        if sc.get("fidelity") != "view" or sc.get("media_type") != CSV_MEDIA:
            missed(
                f"view {view}: fidelity {sc.get('fidelity')!r}, media_type {sc.get('media_type')!r}; "
                f"expected view and {CSV_MEDIA}",
                **reply.excerpt(),
            )
    expect_refused(await tool(ctx, GET, {"deal_id": deal.deal_id, "view": "foo"}), "get_document view foo")


@uwmd_check(
    "uwmd.res.view-unavailable", "UWMD-RES-006", "a view whose section is absent is a 406-equivalent error"
)
async def view_unavailable(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx, "saguaro")
    for view in ("debt", "valuation"):
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id, "view": view})
        expect_status(ctx, reply, (406,), f"get_document view {view} of a deal without its section")
        resource = await read(ctx, deal_uri(deal.deal_id, view=view))
        expect_status(ctx, resource, (406,), f"resources/read ?view={view} of a deal without its section")


def _read_set(deal: Deal) -> list[tuple[str, str, str]]:
    """(label, URI, expected MIME type) for every representation and view."""
    out = [(r, deal_uri(deal.deal_id, r), MEDIA[r]) for r in MODELS]
    out += [(f"view {v}", deal_uri(deal.deal_id, view=v), CSV_MEDIA) for v in VIEWS]
    return out


@uwmd_check("uwmd.res.mime-types", "UWMD-RES-007", "every resource content declares its registered MIME type")
async def mime_types(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import media_equal

    deal = await shared_deal(ctx)
    for label, uri, media in _read_set(deal):
        reply = await read(ctx, uri)
        expect_success(reply, f"resources/read {label}")
        for item in contents(reply):
            if not media_equal(item.get("mimeType"), media):
                missed(f"{label}: mimeType {item.get('mimeType')!r}, expected {media!r}", **reply.excerpt())


@uwmd_check(
    "uwmd.res.text-contents", "UWMD-RES-008", "uw-json and uw-xml are text contents with the right root"
)
async def text_contents(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for representation in ("uw-json", "uw-xml"):
        reply = await read(ctx, deal_uri(deal.deal_id, representation))
        item = only_item(reply, f"resources/read {representation}")
        text = item.get("text")
        if not isinstance(text, str) or "blob" in item:
            missed(f"{representation} is not a text content (keys {sorted(item)})", **reply.excerpt())
        if representation == "uw-json":
            try:
                json.loads(text)
            except ValueError as exc:
                missed(f"the uw-json text is not JSON: {exc}", **reply.excerpt())
            continue
        tag, why = xml_root(text)
        if tag != f"{{{XML_NS}}}document":
            missed(f"the uw-xml root is {tag!r}, not uw:document in {XML_NS}" + (f": {why}" if why else ""))


@uwmd_check("uwmd.res.view-text", "UWMD-RES-009", "named views are UTF-8 text with text/csv; charset=utf-8")
async def view_text(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import media_equal

    deal = await shared_deal(ctx)
    for view in VIEWS:
        reply = await read(ctx, deal_uri(deal.deal_id, view=view))
        item = only_item(reply, f"resources/read ?view={view}")
        text = item.get("text")
        if not isinstance(text, str) or "blob" in item:
            missed(f"view {view} is not a text content (keys {sorted(item)})", **reply.excerpt())
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            missed(f"view {view}'s text does not encode as UTF-8 (a lone surrogate)", **reply.excerpt())
        if not media_equal(item.get("mimeType"), CSV_MEDIA):
            missed(
                f"view {view}: mimeType {item.get('mimeType')!r}, expected {CSV_MEDIA!r}", **reply.excerpt()
            )


@uwmd_check(
    "uwmd.res.bundle-blob", "UWMD-RES-010", "the CSV bundle is a base64 ZIP blob (or a resolvable link)"
)
async def bundle_blob(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    uri = deal_uri(deal.deal_id, "uw-csv-bundle")
    reply = await read(ctx, uri)
    expect_success(reply, "resources/read ?representation=uw-csv-bundle")
    for hop in range(2):
        for item in contents(reply):
            if isinstance(item.get("blob"), str):
                try:
                    data = base64.b64decode(item["blob"], validate=True)
                except (binascii.Error, ValueError):
                    missed("the bundle's blob is not base64", **reply.excerpt())
                names, why = zip_names(data)
                if names is None:
                    missed(f"the bundle's blob is not a ZIP: {why}", **reply.excerpt())
                ctx.note(
                    f"a ZIP of {len(names)} members, {len(data)} bytes" + (" (through a link)" if hop else "")
                )
                return
        other = [
            i.get("uri") for i in contents(reply) if isinstance(i.get("uri"), str) and i.get("uri") != uri
        ]
        if hop or not other:
            break
        uri = str(other[0])
        reply = await read(ctx, uri)
        expect_success(reply, f"resources/read of the bundle's link {uri}")
    missed("the bundle read carries no blob (nor a link that resolves to one)", **reply.excerpt())


@uwmd_check(
    "uwmd.res.variant-identity",
    "UWMD-RES-011",
    "every variant reports the same deal_id and digest",
    once=True,
)
async def variant_identity(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    seen: dict[tuple[Any, Any], str] = {}
    selections = [{"representation": r} for r in MODELS] + [{"view": v} for v in VIEWS]
    last: Reply | None = None
    for selection in selections:
        last = await tool(ctx, GET, {"deal_id": deal.deal_id, **selection})
        sc = expect_success(last, f"get_document {selection}")
        seen.setdefault((sc.get("deal_id"), sc.get("semantic_digest")), json.dumps(selection))
    if len(seen) != 1:
        variants = "; ".join(
            f"{label}: deal_id {k[0]!r}, digest {k[1]!r}" for k, label in list(seen.items())[:3]
        )
        missed(f"variants disagree on the deal's identity: {variants}", **(last.excerpt() if last else {}))


@uwmd_check(
    "uwmd.res.envelope-digest",
    "UWMD-RES-012",
    "the uw-json envelope is valid and its digest recomputes",
    once=True,
)
async def envelope_digest(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    reply = await read(ctx, deal.uri)
    item = only_item(reply, "resources/read uw-json")
    try:
        envelope = json.loads(item.get("text") or "")
    except ValueError as exc:
        missed(f"the uw-json text is not JSON: {exc}", **reply.excerpt())
    problems = schema_problems("envelope", envelope)
    if problems:
        missed(f"the uw-json text is not a UW Document Envelope 1.0: {problems[0]}", **reply.excerpt())
    try:
        recomputed = jcs.semantic_digest(envelope)
    except jcs.CanonicalError as exc:
        missed(f"the envelope has no canonical form: {exc}", **reply.excerpt())
    embedded = envelope.get("semantic_digest")
    reported, _ = await current_digest(ctx, deal)
    if not (recomputed == embedded == reported):
        missed(
            f"digests differ: recomputed {recomputed}, embedded {embedded}, get_document {reported}",
            **reply.excerpt(),
        )
    if deal.expected_digest is not None and recomputed != deal.expected_digest:
        missed(
            f"the envelope read back recomputes to {recomputed}, but the deal loaded recomputes to "
            f"{deal.expected_digest}: its semantics changed on the way through the server",
            **reply.excerpt(),
        )


@uwmd_check(
    "uwmd.scope.semantics-preserved",
    "UWMD-SCOPE-001",
    "a loaded deal keeps its pinned semantic digest",
    once=True,
)
async def semantics_preserved(ctx: CaseContext) -> None:
    settings = ctx.target.settings.get("uwmd")
    parkview = settings.get("parkview_deal_id") if isinstance(settings, dict) else None
    fixture = await fx_optional(ctx)
    checked = 0
    if isinstance(parkview, str):
        digest, reply = await current_digest(ctx, Deal(parkview, "parkview"))
        if digest != PARKVIEW_DIGEST:
            missed(
                f"the Parkview fixture {parkview!r} reports {digest}, not {PARKVIEW_DIGEST}",
                **reply.excerpt(),
            )
        checked += 1
    if fixture is not None and fixture.has("load_deal"):
        for kind, vector in deal_vectors().items():
            if vector["tenant"] != "primary":
                continue
            deal = await load(ctx, kind, exact=True)
            digest, reply = await current_digest(ctx, deal)
            if digest != vector["semantic_digest"]:
                missed(
                    f"example deal {vector['deal_id']!r} (exact bytes) reports {digest}, "
                    f"not its pinned {vector['semantic_digest']}",
                    **reply.excerpt(),
                )
            checked += 1
    if not checked:
        skip("needs: load_deal (or a `[uwmd] parkview_deal_id` of the Parkview fixture in the target file)")
    ctx.note(f"{checked} deals keep their pinned digests")
