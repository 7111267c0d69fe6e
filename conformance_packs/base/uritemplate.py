"""RFC 6570 URI templates: whether a string is one (any level up to 4), and its expansion with one value.

Why our own: the syntax is small, MCP names RFC 6570 without naming a level, and the checks need only a
yes or no with the reason, and one expansion to read; a library would add a dependency for that.
"""

from __future__ import annotations

import re

#: RFC 6570 section 2.2: the operators (level 2: + #; level 3: . / ; ? &) and the reserved = , ! @ |.
OPERATORS = "+#./;?&"
RESERVED_OPERATORS = "=,!@|"
#: Section 2.3 varname (with pct-encoded) and 2.4 modifiers (prefix :1-9999 or explode *).
_VARSPEC = re.compile(
    r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$"
)
#: Section 2.1: what a literal may not hold (controls, space, " ' < > \\ ^ ` { | }; % only as pct-encoded).
_BAD_LITERAL = re.compile(r"[\x00-\x20\x7f\"'<>\\^`{|}]|%(?![0-9A-Fa-f]{2})")
#: How each operator joins: (prefix, separator, named). Section 3.2.1, Appendix A.
_EXPANSION = {
    "": ("", ",", False),
    "+": ("", ",", False),
    "#": ("#", ",", False),
    ".": (".", ".", False),
    "/": ("/", "/", False),
    ";": (";", ";", True),
    "?": ("?", "&", True),
    "&": ("&", "&", True),
}


def _parts(template: str) -> list[tuple[bool, str]]:
    """(is_expression, text) pieces, or ValueError naming the first unbalanced brace."""
    parts: list[tuple[bool, str]] = []
    rest = template
    while rest:
        open_at, close_at = rest.find("{"), rest.find("}")
        if close_at != -1 and (open_at == -1 or close_at < open_at):
            raise ValueError("a '}' closes no expression")
        if open_at == -1:
            parts.append((False, rest))
            break
        if open_at:
            parts.append((False, rest[:open_at]))
        end = rest.find("}", open_at)
        if end == -1:
            raise ValueError("an expression's '{' is never closed")
        parts.append((True, rest[open_at + 1 : end]))
        rest = rest[end + 1 :]
    return parts


def template_problem(template: str) -> str:
    """Why `template` is not an RFC 6570 URI template, or "" when it is."""
    try:
        parts = _parts(template)
    except ValueError as exc:
        return str(exc)
    for is_expression, text in parts:
        if not is_expression:
            bad = _BAD_LITERAL.search(text)
            if bad:
                return f"the literal {text!r} holds {bad.group(0)!r}, which RFC 6570 section 2.1 excludes"
            continue
        if "{" in text:
            return f"the expression {{{text}}} opens another '{{'"
        operator = text[:1] if text[:1] in OPERATORS + RESERVED_OPERATORS else ""
        if operator in RESERVED_OPERATORS and operator:
            return f"the expression {{{text}}} uses the reserved operator {operator!r}"
        varlist = text[len(operator) :]
        for varspec in varlist.split(","):
            if not _VARSPEC.fullmatch(varspec):
                return f"the expression {{{text}}} has an invalid variable {varspec!r}"
    return ""


def expand(template: str, value: str) -> str:
    """`template` (valid: `template_problem` is "") with every variable set to `value`, which must be
    made of unreserved characters (no encoding is done)."""
    out: list[str] = []
    for is_expression, text in _parts(template):
        if not is_expression:
            out.append(text)
            continue
        operator = text[:1] if text[:1] in OPERATORS else ""
        prefix, separator, named = _EXPANSION[operator]
        pieces = []
        for varspec in text[len(operator) :].split(","):
            name = re.split(r"[:*]", varspec, maxsplit=1)[0]
            length = int(varspec.split(":", 1)[1]) if ":" in varspec else None
            shown = value[:length] if length else value
            pieces.append(f"{name}={shown}" if named else shown)
        out.append(prefix + separator.join(pieces))
    return "".join(out)
