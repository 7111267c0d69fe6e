"""UWMD-SEC rows: authorization per deal, per representation and at link resolution; no file paths; and the
codec protections of every entry point against hostile inputs.

A probe that makes the server hang or drop the connection is the defect these rows look for, so here (and
only here) a transport failure is a FAIL with its evidence, not an ERROR. Hostile inputs are data
(`vectors/uwmd/security.json`), stored with the `load_representation` hook; each is then resolved through
resources/read, get_document, convert and validate (a stored uw-xml is also read as uw-xml), every request
bounded by the catalog's 5 seconds, and the server must still answer a ping afterwards. The XML-entity
inputs also go through every input the binding gives a client without a hook: a uwmd.convert whose
inputSchema takes a source document gets each as that document.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Final

from conformance.pack_api import CaseContext, Fixtures, Session, load_vectors, missed, skip
from conformance_packs.uwmd.common import (
    CONVERT,
    GET,
    HOSTILE_TIMEOUT,
    LIST,
    MODELS,
    SUITE,
    VALIDATE,
    Deal,
    Reply,
    Tally,
    b64,
    current_digest,
    deal_uri,
    deal_vectors,
    edit,
    etag_of,
    expect_refused,
    expect_success,
    fx,
    fx_optional,
    listed_tools,
    load,
    new_id,
    probe,
    read,
    readable,
    rename,
    tool,
    uwmd_check,
    walk,
)


async def second_session(ctx: CaseContext) -> tuple[Session, str]:
    """A new session acting as the second principal (second_principal hook), closed with the case."""
    fixture = await fx(ctx, "second_principal")
    info = await fixture.call("second_principal")
    return await ctx.session_as(info), str(info["principal"])


def leaks(reply: Reply, secrets: list[str]) -> list[str]:
    """Which of `secrets` appear anywhere in a reply (raw text, or any decoded string)."""
    texts = [reply.raw()] + [node for _, node in walk(reply.call.response) if isinstance(node, str)]
    return [s for s in secrets if any(s in t for t in texts)]


def denied(tally: Tally, reply: Reply, what: str, secrets: list[str]) -> None:
    if reply.success:
        tally.add(f"{what} succeeded for a principal without access", reply)
    found = leaks(reply, secrets)
    if found:
        tally.add(f"{what} shows the deal's {found[0]!r}", reply)


async def ungranted(ctx: CaseContext, kind: str) -> tuple[Deal, Session, str]:
    """A fresh deal the second principal holds no grant on, and a session acting as it."""
    fixture = await fx(ctx, "load_deal", "grant", "second_principal")
    deal = await load(ctx, kind)
    await fixture.call("grant", principal="second", deal_id=deal.deal_id, representations=[])
    session, principal = await second_session(ctx)
    return deal, session, principal


@uwmd_check(
    "uwmd.sec.deal-authz", "UWMD-SEC-001", "a principal without a grant gets nothing of the deal", once=True
)
async def deal_authz(ctx: CaseContext) -> None:
    deal, session, principal = await ungranted(ctx, "mesa-canary")
    assert deal.document is not None
    secrets = [deal.document["frontmatter"]["deal_name"], deal_vectors()["mesa-canary"]["canary"]]
    digest = await readable(ctx, deal)
    tally = Tally()
    calls: list[tuple[str, str, dict[str, Any]]] = [
        *[(GET, f"get_document {r}", {"deal_id": deal.deal_id, "representation": r}) for r in MODELS],
        (GET, "get_document view rent_roll", {"deal_id": deal.deal_id, "view": "rent_roll"}),
        (VALIDATE, "validate", {"deal_id": deal.deal_id}),
        (CONVERT, "convert", {"deal_id": deal.deal_id, "target_representation": "uw-xml"}),
    ]
    for name, what, args in calls:
        reply = await probe(ctx, what, lambda n=name, a=args: tool(ctx, n, a, session))  # type: ignore[misc]
        denied(tally, reply, what, secrets)
    attempt = await probe(
        ctx, "apply_edit", lambda: edit(ctx, deal, etag_of(digest), rename("taken over"), session=session)
    )
    denied(tally, attempt, "apply_edit", secrets)
    for uri in (deal.uri, deal_uri(deal.deal_id, "uw-xml"), deal_uri(deal.deal_id, view="rent_roll")):
        reply = await probe(ctx, f"resources/read {uri}", lambda u=uri: read(ctx, u, session))  # type: ignore[misc]
        denied(tally, reply, f"resources/read {uri}", secrets)
    after, reply = await current_digest(ctx, deal)
    if after != digest:
        tally.add(f"the other principal's apply_edit was committed (digest {digest} -> {after})", reply)
    tally.judge(ctx, len(calls) + 4)
    ctx.note(f"acting as {principal}")


@uwmd_check(
    "uwmd.sec.representation-authz",
    "UWMD-SEC-002",
    "a grant of uw-json does not open other variants",
    once=True,
)
async def representation_authz(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "load_deal", "grant", "second_principal")
    deal = await load(ctx)
    await fixture.call("grant", principal="second", deal_id=deal.deal_id, representations=["uw-json"])
    session, _ = await second_session(ctx)
    allowed = await tool(ctx, GET, {"deal_id": deal.deal_id}, session)
    expect_success(allowed, "get_document uw-json by a principal granted uw-json")
    expect_success(
        await read(ctx, deal.uri, session), "resources/read uw-json by a principal granted uw-json"
    )
    tally = Tally()
    for what, selection in (
        ("uw-csv-bundle", {"representation": "uw-csv-bundle"}),
        ("view rent_roll", {"view": "rent_roll"}),
    ):
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id, **selection}, session)
        if reply.success:
            tally.add(f"get_document {what} succeeded for a principal granted only uw-json", reply)
    for uri in (deal_uri(deal.deal_id, "uw-csv-bundle"), deal_uri(deal.deal_id, view="rent_roll")):
        reply = await read(ctx, uri, session)
        if reply.success:
            tally.add(f"resources/read {uri} succeeded for a principal granted only uw-json", reply)
    tally.judge(ctx, 6)


@uwmd_check(
    "uwmd.sec.link-replay", "UWMD-SEC-003", "a resource link is authorized when it is resolved", once=True
)
async def link_replay(ctx: CaseContext) -> None:
    deal, session, _ = await ungranted(ctx, "harbor")
    assert deal.document is not None
    reply = await tool(ctx, GET, {"deal_id": deal.deal_id, "view": "rent_roll"})
    expect_success(reply, "get_document view rent_roll by the owner")
    links = [link["uri"] for link in reply.links() if isinstance(link.get("uri"), str)]
    if not links:
        skip("needs a resource_link in get_document's result (see uwmd.tool.resource-link)")
    expect_success(await read(ctx, links[0]), "the owner resolving its own link")
    replayed = await probe(ctx, "the replayed link", lambda: read(ctx, links[0], session))
    tally = Tally()
    denied(
        tally,
        replayed,
        f"resources/read of the replayed link {links[0]}",
        [deal.document["frontmatter"]["deal_name"]],
    )
    tally.judge(ctx, 2)


@uwmd_check("uwmd.sec.no-file-paths", "UWMD-SEC-004", "resource URIs and deal ids are never file paths")
async def no_file_paths(ctx: CaseContext) -> None:
    tally = Tally()
    count = 0
    for vector in load_vectors(SUITE, "security.json"):
        if vector["kind"] != "path-probe":
            continue
        markers = vector["markers"]
        if "uri" in vector:
            uri = vector["uri"]
            replies = [await probe(ctx, f"resources/read {uri}", lambda u=uri: read(ctx, u))]  # type: ignore[misc]
            labels = [f"resources/read {uri}"]
        else:
            deal_id = vector["deal_id"]
            replies, labels = [], []
            for name in (GET, VALIDATE, CONVERT):
                args: dict[str, Any] = {"deal_id": deal_id}
                if name == CONVERT:
                    args["target_representation"] = "uw-json"
                replies.append(await probe(ctx, f"{name} {deal_id}", lambda n=name, a=args: tool(ctx, n, a)))  # type: ignore[misc]
                labels.append(f"{name} with deal_id {deal_id}")
        for label, reply in zip(labels, replies, strict=True):
            count += 1
            if reply.success:
                tally.add(f"{label} succeeded", reply)
            found = leaks(reply, markers)
            if found:
                tally.add(f"{label} returned file contents ({found[0]!r})", reply)
    tally.judge(ctx, count)


# --------------------------------------------------------------------------- SEC-005: hostile inputs


def hostile_vectors(check_name: str) -> list[dict[str, Any]]:
    return [
        v for v in load_vectors(SUITE, "security.json") if v["kind"] == "hostile" and v["check"] == check_name
    ]


async def max_bytes(ctx: CaseContext, representation: str) -> int | None:
    """The max_bytes list_representations advertises for a representation, if any."""
    reply = await tool(ctx, LIST, {})
    for _, node in walk(reply.sc):
        if (
            isinstance(node, dict)
            and node.get("id") == representation
            and isinstance(node.get("max_bytes"), int)
        ):
            value: int = node["max_bytes"]
            return value
    return None


def padded_body(limit: int) -> bytes:
    """A valid uw-json of the minimal example deal, padded with one extension string to `limit` + 1 bytes."""
    document = copy.deepcopy(deal_vectors()["deal-1"]["document"])
    for key in ("semantic_digest", "generated_at", "generator"):
        document.pop(key, None)
    block = copy.deepcopy(next(iter(document["sections"].values())))
    block["annotation"]["section"] = block["content"]["_meta"]["section"] = "x_padding"
    block["content"]["padding"] = ""
    document["extensions"] = {"x_padding": block}
    base = len(json.dumps(document, ensure_ascii=False).encode("utf-8"))
    block["content"]["padding"] = "p" * max(limit + 1 - base, 0)
    body = json.dumps(document, ensure_ascii=False).encode("utf-8")
    assert len(body) == limit + 1, (len(body), limit)
    return body


async def resolve_everywhere(
    ctx: CaseContext, tally: Tally, deal_id: str, label: str, markers: list[str], representation: str
) -> int:
    """resources/read, get_document, convert and validate of a hostile deal: each must be refused in time.

    A deal stored as uw-xml is also read as uw-xml (resources/read and get_document): a server that
    serves its stored source verbatim when the same representation is asked for would otherwise skip
    the protections on exactly that read.
    """
    probes: list[tuple[str, Any]] = [
        ("resources/read", lambda: read(ctx, deal_uri(deal_id), timeout=HOSTILE_TIMEOUT)),
        ("get_document", lambda: tool(ctx, GET, {"deal_id": deal_id}, timeout=HOSTILE_TIMEOUT)),
        (
            "convert",
            lambda: tool(
                ctx,
                CONVERT,
                {"deal_id": deal_id, "target_representation": "uw-json"},
                timeout=HOSTILE_TIMEOUT,
            ),
        ),
        ("validate", lambda: tool(ctx, VALIDATE, {"deal_id": deal_id}, timeout=HOSTILE_TIMEOUT)),
    ]
    if representation == "uw-xml":
        probes += [
            (
                "resources/read uw-xml",
                lambda: read(ctx, deal_uri(deal_id, "uw-xml"), timeout=HOSTILE_TIMEOUT),
            ),
            (
                "get_document uw-xml",
                lambda: tool(
                    ctx, GET, {"deal_id": deal_id, "representation": "uw-xml"}, timeout=HOSTILE_TIMEOUT
                ),
            ),
        ]
    for name, action in probes:
        await refused_in_time(ctx, tally, f"{name} of {label}", action, markers)
    return len(probes)


async def refused_in_time(ctx: CaseContext, tally: Tally, what: str, action: Any, markers: list[str]) -> None:
    """One hostile request: it must be refused, in time, without showing what the input would expand to."""
    reply = await probe(ctx, what, action)
    if reply.success:
        tally.add(f"{what} succeeded: the protection was not applied", reply)
    found = leaks(reply, markers)
    if found:
        tally.add(f"{what} shows {found[0][:40]!r}: the input was expanded or read", reply)


async def still_alive(ctx: CaseContext, label: str) -> None:
    await probe(ctx, f"a ping after {label}", lambda: ctx.request("ping", {}, timeout=HOSTILE_TIMEOUT))


def hostile_body(vector: dict[str, Any]) -> bytes:
    return base64.b64decode(vector["body_base64"])


async def hostile_stored(
    ctx: CaseContext, fixture: Fixtures, tally: Tally, check_name: str
) -> tuple[int, list[str]]:
    """Store each hostile vector with load_representation and resolve it everywhere: (probes, unsized)."""
    count = 0
    unsized: list[str] = []
    for vector in hostile_vectors(check_name):
        label = vector["id"].removeprefix("uwmd.hostile.")
        if "recipe" in vector:
            if vector["recipe"] != "pad-to-max-bytes-plus-one":
                continue
            limit = await max_bytes(ctx, vector["representation"])
            if limit is None:
                unsized.append(vector["representation"])
                continue
            body = padded_body(limit)
        else:
            body = hostile_body(vector)
        deal_id = new_id(ctx, f"hostile-{label}")
        await fixture.call(
            "load_representation",
            deal_id=deal_id,
            representation=vector["representation"],
            body_base64=b64(body),
        )
        count += await resolve_everywhere(
            ctx, tally, deal_id, label, vector["markers"], vector["representation"]
        )
        await still_alive(ctx, label)
    return count, unsized


async def hostile_check(ctx: CaseContext, check_name: str) -> None:
    fixture = await fx(ctx, "load_representation")
    tally = Tally()
    count, unsized = await hostile_stored(ctx, fixture, tally, check_name)
    for representation in unsized:
        ctx.note(f"list_representations advertises no max_bytes for {representation}: no oversize body")
    if not count:
        skip(
            f"needs a max_bytes for {', '.join(unsized)} in list_representations (it sizes the oversize body)"
        )
    tally.judge(ctx, count)


#: Names under which a uwmd.convert may take the source document itself (not a stored deal), in order.
SOURCE_ARGUMENTS: Final = (
    "source_document",
    "source",
    "document",
    "source_body",
    "source_text",
    "source_base64",
    "body",
    "body_base64",
    "content",
    "input",
)


@dataclass(frozen=True)
class SourceArgument:
    """How this server's uwmd.convert takes a source document: the argument and its encoding."""

    name: str
    base64: bool
    properties: frozenset[str]

    def arguments(self, ctx: CaseContext, body: bytes, representation: str) -> dict[str, Any]:
        args: dict[str, Any] = {
            self.name: b64(body) if self.base64 else body.decode("utf-8"),
            "target_representation": "uw-json",
        }
        if "source_representation" in self.properties:
            args["source_representation"] = representation
        if "deal_id" in self.properties:
            args["deal_id"] = new_id(ctx, "inline-source")
        return args


async def source_argument(ctx: CaseContext) -> SourceArgument | None:
    """The argument of uwmd.convert that takes a source document, read from its inputSchema (or None).

    The binding makes source_representation optional "when the server loads a stored envelope", so a
    convert may also take the document itself: that input is an entry point the protections apply to.
    Only a string property counts (the document as text, or base64 when the name or its
    contentEncoding says so).
    """
    tools = await listed_tools(ctx)
    schema = tools.get(CONVERT, {}).get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    for name in SOURCE_ARGUMENTS:
        spec = properties.get(name)
        if isinstance(spec, dict) and spec.get("type") == "string":
            encoded = "base64" in name or spec.get("contentEncoding") == "base64"
            return SourceArgument(name, encoded, frozenset(properties))
    return None


#: A DTD's internal subset, an entity declared with a literal value, and a reference to a named entity.
DOCTYPE: Final = re.compile(r"<!DOCTYPE[^\[>]*\[(.*?)\]>\s*", re.S)
LITERAL_ENTITY: Final = re.compile(r'<!ENTITY\s+(\w+)\s+"([^"&%<]*)"\s*>')
REFERENCE: Final = re.compile(r"&(\w+);")
PREDEFINED: Final = frozenset({"amp", "lt", "gt", "quot", "apos"})


def _expand(entities: dict[str, str], match: re.Match[str]) -> str:
    return entities.get(match.group(1), match.group(0))


def plain_control(candidates: list[dict[str, Any]]) -> bytes:
    """The document a hostile uw-xml with only literal internal entities expands to, its DTD removed.

    Any uw-xml decoder accepts it, so it is sent first through an inline input: a refusal of the hostile
    documents then shows the protection, not an input that refuses every document.
    """
    for vector in candidates:
        text = hostile_body(vector).decode("utf-8")
        declaration = DOCTYPE.search(text)
        if declaration is None:
            continue
        entities = dict(LITERAL_ENTITY.findall(declaration.group(1)))
        rest = text[: declaration.start()] + text[declaration.end() :]
        if entities and set(REFERENCE.findall(rest)) <= set(entities) | PREDEFINED:
            return REFERENCE.sub(functools.partial(_expand, entities), rest).encode("utf-8")
    raise LookupError("no hostile uw-xml vector with literal entities to derive a plain control from")


async def hostile_inline(
    ctx: CaseContext, tally: Tally, argument: SourceArgument, check_name: str
) -> tuple[int, str]:
    """Each hostile vector sent as uwmd.convert's source document: refused in time, never expanded.

    A plain uw-xml goes first; when the input refuses that too, nothing it refuses proves a protection,
    so no hostile document is sent and no probe counts: (probes, what happened).
    """
    candidates = [v for v in hostile_vectors(check_name) if "body_base64" in v]
    control = argument.arguments(ctx, plain_control(candidates), "uw-xml")
    accepted = await probe(
        ctx,
        f"convert with a plain uw-xml as its {argument.name}",
        lambda: tool(ctx, CONVERT, control, timeout=HOSTILE_TIMEOUT),
    )
    if not accepted.success:
        return 0, (
            f"convert's {argument.name} refused a plain uw-xml too ({accepted.outcome.describe()}), so "
            "its refusals of hostile documents would prove nothing: none was sent"
        )
    count = 0
    for vector in candidates:
        label = vector["id"].removeprefix("uwmd.hostile.")
        args = argument.arguments(ctx, hostile_body(vector), vector["representation"])
        what = f"convert with {label} as its {argument.name}"
        await refused_in_time(
            ctx,
            tally,
            what,
            lambda a=args: tool(ctx, CONVERT, a, timeout=HOSTILE_TIMEOUT),
            vector["markers"],
        )
        await still_alive(ctx, what)
        count += 1
    return count, f"{count} through convert's {argument.name} (a plain uw-xml accepted there first)"


@uwmd_check(
    "uwmd.sec.xml-entities",
    "UWMD-SEC-005",
    "uw-xml with DTDs and entities is refused, never expanded",
    once=True,
)
async def xml_entities(ctx: CaseContext) -> None:
    """Every input the binding gives a client: a stored uw-xml (load_representation) read as uw-json and
    as uw-xml, converted and validated, and a uwmd.convert that takes the source document itself."""
    fixture = await fx_optional(ctx)
    stored = fixture is not None and fixture.has("load_representation")
    inline = await source_argument(ctx)
    if not stored and inline is None:
        skip("needs: load_representation (or a uwmd.convert whose inputSchema takes a source document)")
    tally = Tally()
    count = 0
    entry_points = []
    if fixture is not None and stored:
        stored_count, _ = await hostile_stored(ctx, fixture, tally, "xml-entities")
        count += stored_count
        entry_points.append(f"{stored_count} probes of stored uw-xml")
    else:
        entry_points.append("no stored uw-xml (needs: load_representation)")
    if inline is not None:
        inline_count, what = await hostile_inline(ctx, tally, inline, "xml-entities")
        count += inline_count
        entry_points.append(what)
    else:
        entry_points.append("uwmd.convert takes no source document")
    if not count:
        skip(
            "needs: load_representation, or a uwmd.convert source document that can be judged "
            f"({'; '.join(entry_points)})"
        )
    ctx.note("; ".join(entry_points))
    tally.judge(ctx, count)


@uwmd_check(
    "uwmd.sec.zip-limits", "UWMD-SEC-005", "a ZIP bomb and escaping member paths are refused", once=True
)
async def zip_limits(ctx: CaseContext) -> None:
    await hostile_check(ctx, "zip-limits")


@uwmd_check(
    "uwmd.sec.digest-check", "UWMD-SEC-005", "a uw-json whose semantic_digest is wrong is refused", once=True
)
async def digest_check(ctx: CaseContext) -> None:
    await hostile_check(ctx, "digest")


@uwmd_check("uwmd.sec.utf8", "UWMD-SEC-005", "invalid UTF-8 is refused", once=True)
async def utf8(ctx: CaseContext) -> None:
    await hostile_check(ctx, "utf8")


@uwmd_check("uwmd.sec.size-limits", "UWMD-SEC-005", "bodies and edits over max_bytes are refused", once=True)
async def size_limits(ctx: CaseContext) -> None:
    await hostile_check(ctx, "size")
    limit = await max_bytes(ctx, "uw-json")
    if limit is None:
        return
    deal = await load(ctx, "deal-1")
    digest = await readable(ctx, deal)
    operation = {"kind": "frontmatter_set", "path": "notes", "value": "n" * (limit + 1)}
    reply = await probe(ctx, "an oversize apply_edit", lambda: edit(ctx, deal, etag_of(digest), operation))
    expect_refused(reply, f"apply_edit writing a value of {limit + 1} characters (max_bytes {limit})")
    await still_alive(ctx, "an oversize apply_edit")
    after, check_reply = await current_digest(ctx, deal)
    if after != digest:
        missed(
            f"the oversize apply_edit was refused but the deal changed ({digest} -> {after})",
            **check_reply.excerpt(),
        )
