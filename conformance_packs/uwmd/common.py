"""What the UWMD checks share: the binding's constants, tool calls and resource reads with their C-1/C-2
outcome, deals arranged through the fixture controller, the apply_edit argument mapping of gap rule G-U1,
and the C-4 "commits nothing" comparison.

Every helper returns the raw evidence (the `Call`) next to its reading, so a verdict can show the exact
request and response it was made from. Deals the harness loads come from `vectors/uwmd/deals.json` (the
project's own example deals); each check that edits gets a deal of its own, under an id no other check
or revision uses, so checks never depend on each other's leftovers, also when revisions run at once.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, TypeVar
from urllib.parse import quote

from conformance.pack_api import (
    Call,
    CaseContext,
    CheckFunc,
    Fixtures,
    Reply,
    Session,
    TransportError,
    TransportTimeout,
    classified,
    fixtures,
    load_vectors,
    missed,
    optional_fixtures,
    profile_checks,
    schema_errors,
    skip,
    unjudgeable,
)
from conformance_packs.uwmd import jcs

T = TypeVar("T")

SUITE: Final = "uwmd"
SCHEMA_ID: Final = "urn:mcp-conformance:uwmd:1"
TEMPLATE: Final = "https://uwmd.org/deals/{deal_id}{?representation,view}"
BASE_URI: Final = "https://uwmd.org/deals/"
XML_NS: Final = "https://uwmd.org/ns/document/1"
GET: Final = "uwmd.get_document"
VALIDATE: Final = "uwmd.validate"
CONVERT: Final = "uwmd.convert"
EDIT: Final = "uwmd.apply_edit"
LIST: Final = "uwmd.list_representations"
TOOLS: Final = (GET, VALIDATE, CONVERT, EDIT, LIST)
READ_TOOLS: Final = (GET, VALIDATE, CONVERT, LIST)
MODELS: Final = ("uw-json", "uw-xml", "uw-csv-bundle")
MEDIA: Final = {
    "uw-json": "application/vnd.uwmd.document+json",
    "uw-xml": "application/vnd.uwmd.document+xml",
    "uw-csv-bundle": "application/vnd.uwmd.csv-bundle+zip",
}
CSV_MEDIA: Final = "text/csv; charset=utf-8"
VIEWS: Final = ("deal_summary", "rent_roll", "operating_statement", "debt", "valuation", "sources_uses")
DIGEST: Final = re.compile(r"^sha256:[0-9a-f]{64}$")
ZERO_TAG: Final = '"sha256:' + "0" * 64 + '"'
CANARY: Final = "CANARY-9f27c1"
UNKNOWN_DEAL: Final = "conformance-no-such-deal-7f3a"
#: SEC-005: a hostile input must be refused within this many seconds (the catalog's bound).
HOSTILE_TIMEOUT: Final = 5.0
ACTOR: Final = "mcp-conformance"
#: The catalog's stack-trace patterns (UWMD-ERR-003), searched in every error text and structured field.
TRACE_PATTERNS: Final = tuple(
    re.compile(p, re.M)
    for p in (
        r"^\s+at .+\(.+:\d+:\d+\)",
        r"Traceback \(most recent call last\)",
        r'File ".+", line \d+',
        r"\.(ts|js|py|php):\d+",
        r"node_modules/",
        r"Exception in thread",
        r"#\d+ /.+\.php\(\d+\)",
    )
)


def media_equal(a: Any, b: str) -> bool:
    """MIME types compared as the catalog says: lower-cased, no whitespace around `;`."""
    if not isinstance(a, str):
        return False

    def norm(text: str) -> str:
        return ";".join(part.strip() for part in text.lower().split(";"))

    return norm(a) == norm(b)


def deal_uri(deal_id: str, representation: str | None = None, view: str | None = None) -> str:
    """The template's expansion (RFC 6570 simple string expansion for the id, form-style query)."""
    uri = BASE_URI + quote(deal_id, safe="")
    if view is not None:
        return f"{uri}?view={quote(view, safe='')}"
    if representation not in (None, "uw-json"):
        return f"{uri}?representation={quote(representation, safe='')}"
    return uri


def accepted_uris(deal_id: str) -> set[str]:
    """The canonical URI under RFC 6570 and under ECMAScript encodeURIComponent (they differ on !*'())."""
    return {BASE_URI + quote(deal_id, safe=""), BASE_URI + quote(deal_id, safe="!*'()")}


def etag_of(digest: str) -> str:
    return f'"{digest}"'


def find_trace(text: str) -> str | None:
    for pattern in TRACE_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(0).strip()[:120]
    return None


# --------------------------------------------------------------------------- calls


async def request(
    ctx: CaseContext,
    method: str,
    params: dict[str, Any],
    session: Session | None = None,
    timeout: float | None = None,
) -> Reply:
    """One request on the shared session (or `session`), classified; a transport failure propagates.
    An HTTP 4xx without a JSON-RPC answer stands as a refusal (the binding's HTTP-style statuses)."""
    return await classified(ctx, method, params, session, timeout, http_refusal=True)


async def tool(
    ctx: CaseContext,
    name: str,
    arguments: dict[str, Any],
    session: Session | None = None,
    timeout: float | None = None,
) -> Reply:
    return await request(ctx, "tools/call", {"name": name, "arguments": arguments}, session, timeout)


async def read(
    ctx: CaseContext, uri: str, session: Session | None = None, timeout: float | None = None
) -> Reply:
    return await request(ctx, "resources/read", {"uri": uri}, session, timeout)


async def probe(ctx: CaseContext, what: str, action: Callable[[], Awaitable[T]]) -> T:
    """Run one hostile probe; a hang or a broken connection is the defect itself, so it is a FAIL here.

    Elsewhere a transport failure is ERROR (the harness could not judge); a security probe exists to find
    inputs that stop a server, so the same evidence proves the row broken.
    """
    try:
        return await action()
    except TransportError as exc:
        ctx.session_broken()
        how = "did not answer in time" if isinstance(exc, TransportTimeout) else "broke the connection"
        missed(f"{what}: the server {how} ({exc.kind}: {exc})", diagnostics=exc.evidence[:2000])


def contents(reply: Reply) -> list[dict[str, Any]]:
    items = reply.result.get("contents")
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


# --------------------------------------------------------------------------- listings


async def listing(
    ctx: CaseContext, method: str, key: str, *, attach: bool = True
) -> tuple[list[dict[str, Any]], list[Call]]:
    """Every object of a list method: the engine's listing (`ctx.list_all`), once per (target, revision).

    A listing that did not end (a repeated cursor, the page cap) is read as far as it went: the base
    suite judges pagination. The exchange is attached to the case's transcript unless `attach` is false
    (the profile guard every check passes through, which would otherwise add tools/list to every case's
    evidence).
    """
    found = await ctx.list_all(method, key, attach=attach)
    return found.objects(), found.calls


async def listed_tools(ctx: CaseContext, *, attach: bool = True) -> dict[str, dict[str, Any]]:
    items, _ = await listing(ctx, "tools/list", "tools", attach=attach)
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if isinstance(item.get("name"), str):
            out.setdefault(item["name"], item)
    return out


async def profile_shown(ctx: CaseContext) -> bool:
    """Whether tools/list shows the profile's central artifact: any of the five `uwmd.*` tools."""
    tools = await listed_tools(ctx, attach=False)
    return any(name in tools for name in TOOLS)


#: The check of UWMD-PROFILE-001: when it finds no uwmd tool, every other UWMD check is SKIP, blocked by it.
PROFILE_CHECK: Final = "uwmd.profile.shown"


def uwmd_check(
    check_id: str, requirement: str, title: str, **options: Any
) -> Callable[[CheckFunc], CheckFunc]:
    """`check`, first asking whether the server shows the profile at all (UWMD-PROFILE-001).

    A server named with `--suite uwmd` that lists none of the `uwmd.*` tools gets one WARN on that row
    (level implied; --strict: FAIL) and SKIPs blocked by it: not one verdict per row judged on an absence.
    """

    return _profile_check(check_id, requirement, title, **options)


_profile_check = profile_checks(
    PROFILE_CHECK,
    lambda ctx: profile_shown(ctx),
    "tools/list lists none of the uwmd.* tools, so the server does not show the UW Markdown binding",
)


async def listed_tool(ctx: CaseContext, name: str) -> dict[str, Any]:
    tools = await listed_tools(ctx)
    if name not in tools:
        skip(f"needs the tool {name} in tools/list (see uwmd.tool.listed)")
    return tools[name]


# --------------------------------------------------------------------------- deals


def deal_vectors() -> dict[str, dict[str, Any]]:
    """The project's example deals by short name (harbor, saguaro, mesa-canary, copper-defect, ...)."""
    return {
        v["id"].removeprefix("uwmd.deal."): v
        for v in load_vectors("uwmd", "deals.json")
        if v["kind"] == "deal"
    }


@dataclass
class Deal:
    """A deal on the target: its id, and when the harness loaded it, the document and its digest."""

    deal_id: str
    kind: str
    document: dict[str, Any] | None = None
    expected_digest: str | None = None
    tenant: str = "primary"

    @property
    def uri(self) -> str:
        return deal_uri(self.deal_id)

    def section(self, name: str) -> dict[str, Any] | None:
        sections = (self.document or {}).get("sections", {})
        block = sections.get(name)
        return block if isinstance(block, dict) else None


async def fx(ctx: CaseContext, *hooks: str) -> Fixtures:
    """The target's controller when it offers every hook named; else SKIP `needs: ...`."""
    return await fixtures(ctx, *hooks, schema_id=SCHEMA_ID)


async def fx_optional(ctx: CaseContext) -> Fixtures | None:
    return await optional_fixtures(ctx, SCHEMA_ID)


def new_id(ctx: CaseContext, kind: str, odd: bool = False) -> str:
    """A deal id no other check or revision of this run uses (`odd`: with a space and a slash)."""
    token = ctx.shared.setdefault("uwmd:token", secrets.token_hex(4))
    counter = ctx.shared.setdefault("uwmd:counter", itertools.count(1))
    number = next(counter)
    return f"conf / {token}-{number}" if odd else f"conf-{kind}-{token}-{number}"


async def load(
    ctx: CaseContext,
    kind: str = "harbor",
    *,
    exact: bool = False,
    odd_id: bool = False,
    tenant: str = "primary",
) -> Deal:
    """load_deal of an example deal: under a new id of its own, or `exact` (its own id and bytes)."""
    fixture = await fx(ctx, "load_deal")
    vector = deal_vectors()[kind]
    document = copy.deepcopy(vector["document"])
    params: dict[str, Any] = {"document": document}
    if tenant != "primary":
        params["tenant"] = tenant
    if exact:
        deal_id, expected = vector["deal_id"], vector["semantic_digest"]
    else:
        deal_id = new_id(ctx, kind, odd_id)
        params["deal_id"] = deal_id
        document["frontmatter"]["deal_id"] = deal_id
        expected = jcs.semantic_digest(document)
    result = await fixture.call("load_deal", **params)
    if result.get("deal_id") != deal_id:
        unjudgeable(f"load_deal stored the deal as {result.get('deal_id')!r}, not {deal_id!r}")
    return Deal(deal_id, kind, document, expected, tenant)


#: Deals a target file can name instead of offering load_deal: `[uwmd] <key> = "<deal id>"`.
SETTINGS: Final = {
    "harbor": ("deal_id", "a deal with every section the six views need"),
    "saguaro": ("nodebt_deal_id", "a deal without debt_structure and valuation sections"),
    "mesa-canary": ("canary_deal_id", f"a deal whose prose and sections carry {CANARY}"),
    "copper-defect": (
        "defect_deal_id",
        "a deal whose quick_metrics.dscr disagrees with debt_structure.dscr (CC-02)",
    ),
}


def configured_deal(ctx: CaseContext, kind: str) -> str | None:
    """The deal id the target file's `[uwmd]` table names for `kind`, if it names one."""
    settings = ctx.target.settings.get("uwmd")
    configured = settings.get(SETTINGS[kind][0]) if isinstance(settings, dict) else None
    return configured if isinstance(configured, str) else None


async def shared_deal(ctx: CaseContext, kind: str = "harbor") -> Deal:
    """A deal for read-only rows, once per (target, revision): the one the target file names, else one
    loaded with load_deal.

    A named deal wins over load_deal, so a service can serve the read-only rows from its own deals also
    when it offers the hook (rows that edit always load a deal of their own).
    """
    key = f"uwmd:deal:{kind}"
    if key not in ctx.shared:
        configured = configured_deal(ctx, kind)
        if configured is not None:
            ctx.shared[key] = Deal(configured, kind)
        else:
            fixture = await fx_optional(ctx)
            if fixture is None or not fixture.has("load_deal"):
                name, what = SETTINGS[kind]
                skip(f"needs: load_deal (or a `[uwmd] {name}` of {what} in the target file)")
            ctx.shared[key] = await load(ctx, kind)
    deal: Deal = ctx.shared[key]
    return deal


async def current_digest(
    ctx: CaseContext, deal: Deal, session: Session | None = None
) -> tuple[str | None, Reply]:
    """get_document's semantic_digest of the deal now (None when the read did not succeed)."""
    reply = await tool(ctx, GET, {"deal_id": deal.deal_id}, session)
    value = reply.sc.get("semantic_digest") if reply.success else None
    return (value if isinstance(value, str) else None), reply


async def readable(ctx: CaseContext, deal: Deal) -> str:
    """The deal's current digest; SKIP when get_document does not read it (the TOOL rows judge that)."""
    digest, reply = await current_digest(ctx, deal)
    if digest is None:
        skip(f"needs a readable deal: get_document answered {reply.outcome.describe()} (see uwmd.tool.*)")
    return digest


async def uw_json(
    ctx: CaseContext, deal: Deal, session: Session | None = None
) -> tuple[dict[str, Any] | None, Reply]:
    """The deal's uw-json envelope read through resources/read (None when it cannot be read or parsed)."""
    reply = await read(ctx, deal.uri, session)
    for item in contents(reply):
        if isinstance(item.get("text"), str):
            try:
                value = json.loads(item["text"])
            except ValueError:
                return None, reply
            return (value if isinstance(value, dict) else None), reply
    return None, reply


async def expect_unchanged(ctx: CaseContext, deal: Deal, before: str, what: str, reply: Reply) -> None:
    """C-4: after an expected refusal the deal's digest must be what it was."""
    after, _ = await current_digest(ctx, deal)
    if after != before:
        missed(
            f"{what} was refused ({reply.outcome.describe()}) but the deal changed: semantic_digest "
            f"{before} -> {after}",
            **reply.excerpt(),
        )


# --------------------------------------------------------------------------- apply_edit arguments (G-U1)


class _Missing:
    """Marks an argument the caller leaves out."""


MISSING: Final = _Missing()


@dataclass
class EditArgs:
    """How this server names apply_edit's concepts, read from its inputSchema (gap rule G-U1)."""

    deal: str
    if_match: str
    operation: str
    context: str | None
    actor: str = "actor"
    source: str = "source"

    def build(
        self,
        deal_id: Any,
        if_match: Any,
        operation: Any,
        *,
        source: Any = "user",
        actor: Any = ACTOR,
        omit: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Arguments of one call; `omit` names concepts to leave out (deal, if_match, operation, actor,
        source); a value of MISSING also leaves it out."""
        args: dict[str, Any] = {}
        if "deal" not in omit and deal_id is not MISSING:
            args[self.deal] = deal_id
        if "if_match" not in omit and if_match is not MISSING:
            args[self.if_match] = if_match
        if "operation" not in omit and operation is not MISSING:
            args[self.operation] = operation
        context: dict[str, Any] = {}
        if "actor" not in omit:
            context[self.actor] = actor
        if "source" not in omit:
            context[self.source] = source
        if self.context is None:
            args.update(context)
        else:
            args[self.context] = context
        return args


def _pick(properties: dict[str, Any], *names: str) -> str | None:
    return next((n for n in names if n in properties), None)


async def edit_args(ctx: CaseContext) -> EditArgs:
    """The G-U1 mapping; SKIP with a note when the inputSchema does not name the concepts."""
    schema = (await listed_tool(ctx, EDIT)).get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        skip("needs an apply_edit inputSchema with properties, to map its arguments (gap rule G-U1)")
    deal = _pick(properties, "deal_id", "dealId", "deal")
    if_match = _pick(properties, "if_match", "ifMatch", "if-match", "etag")
    operation = _pick(properties, "operation", "edit", "edit_operation", "editOperation", "op")
    context = _pick(properties, "context", "actor_context", "actorContext")
    flat = context is None and {"actor", "source"} <= set(properties)
    if deal is None or if_match is None or operation is None or (context is None and not flat):
        skip(
            "cannot map apply_edit's arguments from its inputSchema (gap rule G-U1: deal_id, if_match, "
            "operation/edit/edit_operation, context/actor_context or flat actor/source); "
            f"it has {sorted(properties)}"
        )
    return EditArgs(deal, if_match, operation, context)


def rename(value: str) -> dict[str, Any]:
    return {"kind": "frontmatter_set", "path": "deal_name", "value": value}


async def edit(
    ctx: CaseContext,
    deal: Deal,
    if_match: Any,
    operation: Any,
    *,
    session: Session | None = None,
    **options: Any,
) -> Reply:
    args = (await edit_args(ctx)).build(deal.deal_id, if_match, operation, **options)
    return await tool(ctx, EDIT, args, session)


# --------------------------------------------------------------------------- expectations


def expect_success(reply: Reply, what: str) -> dict[str, Any]:
    """SUCCESS with an object structuredContent; its value."""
    if not reply.success:
        missed(f"{what}: expected SUCCESS, got {reply.outcome.describe()}", **reply.excerpt())
    return reply.sc


def expect_refused(reply: Reply, what: str) -> None:
    if reply.success:
        missed(f"{what}: expected a refusal, got SUCCESS", **reply.excerpt())


def expect_status(
    ctx: CaseContext, reply: Reply, statuses: tuple[int, ...], what: str, *, strict: bool = True
) -> None:
    """The reply maps to one of `statuses` (C-1/C-2); a text-only match is WARN weak-error-encoding.

    With `strict=False` any refusal passes and another class is only a WARN (rows whose catalog text
    names the expected class as the reference's, not as the requirement).
    """
    outcome = reply.outcome
    wanted = " or ".join(str(s) for s in statuses)
    if outcome.success:
        missed(f"{what}: expected {wanted}, got SUCCESS (isError is not true)", **reply.excerpt())
    if outcome.kind != "STATUS" or outcome.status not in statuses:
        if strict:
            missed(f"{what}: expected {wanted}, got {outcome.describe()}", **reply.excerpt())
        ctx.soft_warn(f"{what}: refused as {outcome.describe()}, not {wanted}")
        return
    if outcome.weak:
        ctx.soft_warn(
            f"weak-error-encoding: {what} says {outcome.status} only in its text ({outcome.code!r})"
        )


def expect_rejected_input(ctx: CaseContext, reply: Reply, what: str) -> None:
    """C-3: -32602 or an isError result both reject; SUCCESS fails; another JSON-RPC error is WARN."""
    if reply.success:
        missed(f"{what} was accepted (SUCCESS); it must be rejected", **reply.excerpt())
    call = reply.call
    if call.error is not None and call.error_code != -32602 and reply.outcome.status not in (400, 406, 428):
        ctx.soft_warn(
            f"{what} was rejected with JSON-RPC code {call.error_code!r}, not -32602 or isError (C-3)"
        )


def note_once(ctx: CaseContext, text: str) -> None:
    if text not in ctx.notes:
        ctx.note(text)


def text_blocks(result: dict[str, Any]) -> list[str]:
    return [
        b["text"]
        for b in result.get("content") or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def walk(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every (JSON pointer, value) in a JSON value, containers included."""
    found = [(path, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            found += walk(item, f"{path}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += walk(item, f"{path}/{index}")
    return found


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass
class Tally:
    """Findings of a multi-probe check: every probe runs, and the first problem is the headline."""

    problems: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)

    def add(self, problem: str, reply: Reply | None = None) -> None:
        self.problems.append(problem)
        if reply is not None and not self.evidence:
            self.evidence = dict(reply.excerpt())

    def judge(self, ctx: CaseContext, probes: int) -> None:
        if self.problems:
            more = (
                f" (and {len(self.problems) - 1} more: {'; '.join(self.problems[1:4])})"
                if len(self.problems) > 1
                else ""
            )
            fail(self.problems[0] + more, **self.evidence)
        ctx.note(f"{probes} probes")


def fail(message: str, **evidence: Any) -> NoReturn:
    missed(message, **evidence)


def schema_problems(definition: str, instance: Any) -> list[str]:
    return schema_errors(SCHEMA_ID, definition, instance)
