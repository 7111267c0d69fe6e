"""The raw JSON-lines server with one tool made for fuzzing, and input-handling defects to plant in it.

`probe` takes a string, an enum, an integer, a bounded number and a nested object with a free-form part,
so every rule the fuzz suite breaks has a place to break. With no `--defect` the server validates every
call exactly against the schema (with `jsonschema`) and handles every valid input; each `--defect NAME`
plants one fault that a fuzz check must find within its default example budget.

`wipe` (destructive, not read-only) ends the process when called, so a run under the default "safe"
call policy proves the fuzzer never calls it; `merge` uses `allOf`, which the fuzzer skips with the reason.

    python -m tests.servers.fuzz_mutants [--defect NAME] [--tools probe,wipe,merge]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import sys
import time
from typing import Any

import jsonschema

from tests.servers.raw_server import RpcError, Server

DEFECTS = {
    "none": "conformant",
    "empty-string": "the process exits when `text` is the empty string (a crash on valid input)",
    "deep-object": "nesting deeper than 4 levels makes the handler raise; answered -32603 Internal error",
    "large-integer": "hangs when |count| exceeds 10**9 (a loop that never ends)",
    "dies-after-answer": "answers a negative count, then exits before the next request",
    "wrong-type-trace": "a wrong type is rejected with a Python traceback and a file path in the text",
    "enum-accepted": "does not check `mode` against its enum",
    "extra-property-crash": "the process exits on a property the schema does not declare",
    "invalid-as-internal": "rejects invalid arguments with -32603 Internal error instead of -32602/isError",
    "two-faults": "enum-accepted and wrong-type-trace at once: the first finding must not hide the second",
}
#: Defects made of others.
COMBINED = {"two-faults": {"enum-accepted", "wrong-type-trace"}}

PROBE = {
    "name": "probe",
    "description": "Summarise a request: text, mode, count and options.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 40},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "options": {
                "type": "object",
                "properties": {"label": {"type": "string"}, "meta": {"type": "object"}},
                "additionalProperties": False,
            },
        },
        "required": ["text", "mode", "count"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
#: Not read-only: the "safe" call policy must never call it. Called anyway, it ends the process.
WIPE = {
    "name": "wipe",
    "description": "Delete everything (a stand-in for a destructive tool).",
    "inputSchema": {
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": False, "destructiveHint": True},
}
#: A schema the fuzz converter cannot honour (allOf): the tool is skipped with the reason.
MERGE = {
    "name": "merge",
    "description": "Merge two records.",
    "inputSchema": {"type": "object", "allOf": [{"required": ["a"]}, {"required": ["b"]}]},
    "annotations": {"readOnlyHint": True},
}
TOOLS = {"probe": PROBE, "wipe": WIPE, "merge": MERGE}
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/srv/probe/handlers.py", line 42, in validate\n'
    "TypeError: unsupported operand type(s)"
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


class FuzzServer(Server):
    """The raw server with the fuzzing tools in place of its own, and one planted defect."""

    def __init__(self, defect: str, tools: list[str]) -> None:
        super().__init__("none")
        self.faults = COMBINED.get(defect, {defect})
        self.tools = [TOOLS[name] for name in tools]
        schema = copy.deepcopy(PROBE["inputSchema"])
        if "enum-accepted" in self.faults:
            del schema["properties"]["mode"]["enum"]  # type: ignore[index]
        self.validator = jsonschema.Draft202012Validator(schema)
        self.exit_after_answer = False

    def handle(self, message: Any, headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        try:
            return super().handle(message, headers)
        except Exception:  # an unhandled handler failure, answered the way SDKs do: a bare -32603
            msg_id = message.get("id") if isinstance(message, dict) else None
            return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "Internal error"}}

    def tools_page(self, cursor: Any) -> dict[str, Any]:
        if cursor is not None:
            raise RpcError(-32602, "Invalid cursor")
        return {"tools": self.tools}

    def call(self, params: dict[str, Any], revision: str) -> dict[str, Any]:
        name, args = params.get("name"), params.get("arguments")
        if name not in [t["name"] for t in self.tools]:
            raise RpcError(-32602, f"Unknown tool: {name}")
        if name == "wipe":
            os._exit(4)
        if name == "merge":
            return {"content": [{"type": "text", "text": "merged"}]}
        problem = self.problem(args)
        if problem:
            if "invalid-as-internal" in self.faults:
                raise RpcError(-32603, "Internal error")
            if revision == "2025-06-18":
                raise RpcError(-32602, f"Invalid arguments: {problem}")
            return {"content": [{"type": "text", "text": f"Invalid arguments: {problem}"}], "isError": True}
        assert isinstance(args, dict)
        faults = self.faults
        if "empty-string" in faults and args["text"] == "":
            os._exit(1)
        if "deep-object" in faults and depth(args) > 4:
            raise RecursionError("maximum recursion depth exceeded")
        if "large-integer" in faults and abs(args["count"]) > 10**9:
            while True:
                time.sleep(1)
        if "dies-after-answer" in faults and args["count"] < 0:
            self.exit_after_answer = True
        summary = {"text": args["text"], "mode": args["mode"], "count": args["count"], "depth": depth(args)}
        return {
            "content": [{"type": "text", "text": json.dumps(summary, separators=(",", ":"))}],
            "structuredContent": summary,
        }

    def problem(self, args: Any) -> str:
        if not isinstance(args, dict):
            return "arguments must be an object"
        errors = sorted(self.validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])
        if not errors:
            return ""
        error = errors[0]
        if "extra-property-crash" in self.faults and error.validator == "additionalProperties":
            os._exit(3)
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        text = f"{where}: {error.message[:120]}"
        if "wrong-type-trace" in self.faults and error.validator == "type":
            text += "\n" + TRACE
        return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", default="none", choices=sorted(DEFECTS))
    parser.add_argument("--tools", default="probe,wipe", help="comma-separated: probe, wipe, merge")
    args = parser.parse_args()
    server = FuzzServer(args.defect, [t for t in args.tools.split(",") if t in TOOLS])
    out = sys.stdout.buffer
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            response = server.handle_line(line.rstrip(b"\r\n"))
            if response is not None:
                out.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")
                out.flush()
            if server.exit_after_answer:
                os._exit(0)


if __name__ == "__main__":
    main()
