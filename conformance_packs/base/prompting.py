"""What the prompt, completion and logging checks share: per-revision shapes, the prompts listed, the
prompts/get calls made once per (target, revision), and the log messages a call drew."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.pack_api import TESTED_REVISIONS, Call, CaseContext, era_of, schema, skip
from conformance.pack_api import schema_errors as errors

PROMPTS_SCHEMA = "urn:mcp-conformance:base-prompts:1"
#: Prompts got with prompts/get per revision (a server may list hundreds).
PROMPTS_GOT = 20
#: The value given to a required argument no completion suggests one for: a digit reads as a number or
#: an id in most servers, and as text in all.
FALLBACK_VALUE = "1"
#: MCP's log levels (LoggingLevel), severity ascending.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def shape_errors(definition: str, instance: Any, revision: str) -> list[str]:
    """`instance` against this pack's shape of `definition` in `revision` (the newest `R:` definition at
    or after it, then `modern:` for 2026-07-28, then the shared one), as `pointer: message` lines."""
    names = [f"{r}:{definition}" for r in sorted(TESTED_REVISIONS) if r >= revision]
    if era_of(revision) == "modern":
        names.append(f"modern:{definition}")
    defs = schema(PROMPTS_SCHEMA)["$defs"]
    chosen = next((n for n in names if n in defs), definition)
    return errors(PROMPTS_SCHEMA, chosen, instance)


async def prompts(ctx: CaseContext) -> list[dict[str, Any]]:
    """The prompts listed (objects with a string name); a listing that yields none is SKIP."""
    listing = await ctx.list_all("prompts/list", "prompts")
    found = [p for p in listing.items if isinstance(p, dict) and isinstance(p.get("name"), str)]
    if not found:
        skip("prompts/list offers no prompt" + (f" ({listing.problem})" if listing.problem else ""))
    return found


def arguments_of(prompt: dict[str, Any]) -> list[dict[str, Any]]:
    listed = prompt.get("arguments")
    return (
        [a for a in listed if isinstance(a, dict) and isinstance(a.get("name"), str)]
        if isinstance(listed, list)
        else []
    )


@dataclass
class PromptGet:
    """One prompts/get: the prompt, the arguments sent, the call."""

    prompt: dict[str, Any]
    arguments: dict[str, str]
    call: Call

    @property
    def name(self) -> str:
        return str(self.prompt["name"])

    def result(self) -> dict[str, Any] | None:
        result = self.call.result
        return result if isinstance(result, dict) else None


async def prompt_gets(ctx: CaseContext) -> list[PromptGet]:
    """Each listed prompt (up to PROMPTS_GOT) got once with its required arguments only, and once more
    with its optional ones too when it has any; values as `suggested`. Once per (target, revision)."""

    async def get_all() -> list[PromptGet]:
        out = []
        for prompt in (await prompts(ctx))[:PROMPTS_GOT]:
            args = arguments_of(prompt)
            values: dict[str, str] = {}
            for arg in args:
                values[arg["name"]] = await suggested(ctx, prompt["name"], arg["name"], values)
            required = {a["name"]: values[a["name"]] for a in args if a.get("required") is True}
            tries = [required]
            if len(args) > len(required):
                tries.append(values)
            for given in tries:
                call = await ctx.request("prompts/get", {"name": prompt["name"], "arguments": given})
                out.append(PromptGet(prompt, given, call))
        return out

    return await ctx.remember_once("prompt-gets", "getting each listed prompt", get_all)


async def suggested(ctx: CaseContext, prompt: str, argument: str, resolved: dict[str, str]) -> str:
    """The first value completion/complete suggests for a prompt argument (given the ones resolved
    before it) when the server declares completions, else FALLBACK_VALUE: a server that says which
    values it takes (an enum of resource types, say) gets one of them."""
    if not ctx.identity.has("completions"):
        return FALLBACK_VALUE
    params: dict[str, Any] = {
        "ref": {"type": "ref/prompt", "name": prompt},
        "argument": {"name": argument, "value": ""},
    }
    if resolved:
        params["context"] = {"arguments": dict(resolved)}
    call = await ctx.request("completion/complete", params)
    completion = call.result.get("completion") if isinstance(call.result, dict) else None
    values = completion.get("values") if isinstance(completion, dict) else None
    first = values[0] if isinstance(values, list) and values else None
    return first if isinstance(first, str) else FALLBACK_VALUE


async def got_prompts(ctx: CaseContext) -> list[PromptGet]:
    """The prompts/get calls answered with a result; none is SKIP (a refusal of made-up argument values
    is no fault: the rows about refusals judge those)."""
    gets = await prompt_gets(ctx)
    answered = [g for g in gets if g.result() is not None]
    if not answered:
        refused = ", ".join(sorted({g.name for g in gets}))
        skip(f"no prompts/get was answered with a result (refused: {refused})")
    ctx.note(
        f"judged {len(answered)} prompts/get result(s): " + ", ".join(sorted({g.name for g in answered}))
    )
    return answered


def log_messages(call: Call) -> list[dict[str, Any]]:
    """The notifications/message frames that came with a call's answer."""
    return [
        f.value
        for f in call.reply.frames
        if f.kind == "notification"
        and isinstance(f.value, dict)
        and f.value.get("method") == "notifications/message"
    ]


def level_of(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    level = params.get("level") if isinstance(params, dict) else None
    return level if level in LOG_LEVELS else None
