"""The one `--call-tools` policy: which listed tools a case may call.

Calling a tool may change the server's state, so by default only tools annotated `readOnlyHint: true`
are called ("safe"); "all" calls every listed tool and "none" calls none. Every pack asks here, so one
option means the same in each of them.
"""

from __future__ import annotations

from typing import Any

POLICIES = ("safe", "all", "none")


def read_only(tool: dict[str, Any]) -> bool:
    """The tool is annotated `readOnlyHint: true` (an absent annotation is the MCP default, false)."""
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def may_call(policy: str, tool: dict[str, Any]) -> bool:
    """Whether the policy lets a case call `tool`."""
    if policy == "none":
        return False
    return policy == "all" or read_only(tool)


def callable_tools(policy: str, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listed tools the policy lets a case call, in listed order."""
    return [tool for tool in listed if may_call(policy, tool)]
