"""completion/complete checks: for a listed prompt's argument and a listed resource template's variable.

From 2025-03-26 a server that supports completions declares the `completions` capability, so the
checks run only where it is declared. 2024-11-05 has no such capability: completion is asked for
there when prompts or resources are offered, and a -32601 answer means it is not offered (SKIP).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from conformance.pack_api import Call, CaseContext, at_least, check, jsonrpc, missed, skip
from conformance_packs.base.prompting import arguments_of, shape_errors

#: The completions capability exists from this revision on (2025-03-26 server/utilities/completion).
FIRST_COMPLETIONS_CAPABILITY = "2025-03-26"
MAX_VALUES = 100
UNKNOWN_PROMPT = "conformance-no-such-prompt-7f3a"
#: A URI-template variable (RFC 6570): the first name of a `{...}` expression, operator left out.
TEMPLATE_VAR_RE = re.compile(r"\{[+#./;?&]?([A-Za-z0-9_%.]+)")


@dataclass
class Completed:
    """One completion/complete asked: what it completed, and the call."""

    what: str
    call: Call

    def completion(self) -> dict[str, Any] | None:
        result = self.call.result
        value = result.get("completion") if isinstance(result, dict) else None
        return value if isinstance(value, dict) else None


def require_offered(ctx: CaseContext) -> None:
    if at_least(ctx.revision, FIRST_COMPLETIONS_CAPABILITY):
        if not ctx.identity.has("completions"):
            skip("the server does not declare the completions capability")
    elif not (ctx.identity.has("prompts") or ctx.identity.has("resources")):
        skip("the server offers neither prompts nor resources, nothing to complete")


async def _first_prompt_argument(ctx: CaseContext) -> tuple[str, str] | None:
    if not ctx.identity.has("prompts"):
        return None
    listing = await ctx.list_all("prompts/list", "prompts")
    for prompt in listing.items:
        if isinstance(prompt, dict) and isinstance(prompt.get("name"), str):
            args = arguments_of(prompt)
            if args:
                return prompt["name"], args[0]["name"]
    return None


async def _first_template_variable(ctx: CaseContext) -> tuple[str, str] | None:
    if not ctx.identity.has("resources"):
        return None
    listing = await ctx.list_all("resources/templates/list", "resourceTemplates")
    for template in listing.items:
        uri = template.get("uriTemplate") if isinstance(template, dict) else None
        if not isinstance(uri, str):
            continue
        match = TEMPLATE_VAR_RE.search(uri)
        if match:
            return uri, match.group(1)
    return None


async def completions(ctx: CaseContext) -> dict[str, Completed | None]:
    """completion/complete asked (with an empty value, the widest answer) for the first listed prompt
    argument and the first listed template variable, once per (target, revision); None where the
    server lists no such thing."""

    async def ask() -> dict[str, Completed | None]:
        out: dict[str, Completed | None] = {"prompt": None, "template": None}
        found = await _first_prompt_argument(ctx)
        if found:
            name, arg = found
            ref = {"type": "ref/prompt", "name": name}
            call = await ctx.request(
                "completion/complete", {"ref": ref, "argument": {"name": arg, "value": ""}}
            )
            out["prompt"] = Completed(f"argument {arg!r} of prompt {name!r}", call)
        found = await _first_template_variable(ctx)
        if found:
            uri, var = found
            ref = {"type": "ref/resource", "uri": uri}
            call = await ctx.request(
                "completion/complete", {"ref": ref, "argument": {"name": var, "value": ""}}
            )
            out["template"] = Completed(f"variable {var!r} of template {uri!r}", call)
        return out

    return await ctx.remember_once("completions", "asking completion/complete", ask)


def answered(ctx: CaseContext, asked: Completed | None, absent: str) -> Completed:
    """The completion asked, when it was answered with a result; SKIP saying why not otherwise."""
    if asked is None:
        skip(absent)
    if asked.call.error_code == jsonrpc.METHOD_NOT_FOUND and not at_least(
        ctx.revision, FIRST_COMPLETIONS_CAPABILITY
    ):
        skip("completion/complete is not offered (-32601)")
    if asked.call.result is None:
        why = json.dumps(asked.call.error, ensure_ascii=False) if asked.call.error else asked.call.no_answer()
        skip(f"completion of the {asked.what} was refused, which no rule forbids: {why}"[:300])
    ctx.note(f"completed the {asked.what}")
    return asked


async def judged_completions(ctx: CaseContext) -> list[Completed]:
    asked = await completions(ctx)
    found = [a for a in asked.values() if a is not None and isinstance(a.call.result, dict)]
    if not found:
        skip("no completion/complete was answered with a result (nothing listed to complete, or refused)")
    return found


@check("base.completion.prompt-argument", "BASE-COMPL-001", "completion of a prompt argument: result shape")
async def prompt_argument(ctx: CaseContext) -> None:
    require_offered(ctx)
    asked = answered(ctx, (await completions(ctx))["prompt"], "no listed prompt has an argument to complete")
    problems = shape_errors("completeResult", asked.call.result, ctx.revision)
    if problems:
        missed(f"completing the {asked.what}: " + "; ".join(problems), **asked.call.excerpt())


@check(
    "base.completion.template-variable", "BASE-COMPL-002", "completion of a template variable: result shape"
)
async def template_variable(ctx: CaseContext) -> None:
    require_offered(ctx)
    asked = answered(ctx, (await completions(ctx))["template"], "no listed resource template has a variable")
    problems = shape_errors("completeResult", asked.call.result, ctx.revision)
    if problems:
        missed(f"completing the {asked.what}: " + "; ".join(problems), **asked.call.excerpt())


@check("base.completion.max-values", "BASE-COMPL-003", "a completion answer holds at most 100 values")
async def max_values(ctx: CaseContext) -> None:
    require_offered(ctx)
    for asked in await judged_completions(ctx):
        values = (asked.completion() or {}).get("values")
        if isinstance(values, list) and len(values) > MAX_VALUES:
            missed(f"completing the {asked.what} drew {len(values)} values", **asked.call.excerpt(400))
        ctx.note(f"{asked.what}: {len(values) if isinstance(values, list) else 'no'} values")


@check(
    "base.completion.total-consistent", "BASE-COMPL-004", "completion total and hasMore agree with the values"
)
async def total_consistent(ctx: CaseContext) -> None:
    require_offered(ctx)
    judged = 0
    for asked in await judged_completions(ctx):
        completion = asked.completion() or {}
        values, total, more = completion.get("values"), completion.get("total"), completion.get("hasMore")
        if not isinstance(values, list) or not isinstance(total, int):
            continue
        judged += 1
        sent = len(values)
        where = f"completing the {asked.what}: {sent} values, total {total!r}, hasMore {more!r}"
        if total < sent:
            missed(f"{where}: total counts fewer options than were sent", **asked.call.excerpt(400))
        if total > sent and more is False:
            missed(
                f"{where}: more options exist than were sent, yet hasMore is false", **asked.call.excerpt(400)
            )
        if total == sent and more is True:
            missed(f"{where}: every option was sent, yet hasMore is true", **asked.call.excerpt(400))
    if not judged:
        skip("no completion answer gave a total to compare its values and hasMore with")


@check(
    "base.completion.unknown-prompt",
    "BASE-COMPL-005",
    "completion for an unknown prompt is -32602",
    revisions=("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"),
    capability="completions",
)
async def unknown_prompt(ctx: CaseContext) -> None:
    ref = {"type": "ref/prompt", "name": UNKNOWN_PROMPT}
    call = await ctx.request("completion/complete", {"ref": ref, "argument": {"name": "x", "value": ""}})
    if call.error is None:
        missed(f"completion for {UNKNOWN_PROMPT!r}, a prompt not listed, was not refused", **call.excerpt())
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(
            f"completion for an unknown prompt drew {call.drew()}, not -32602",
            **call.excerpt(),
        )
