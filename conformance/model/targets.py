"""What the user points the harness at: a one-string spec or a small TOML target file.

    stdio:python -m my_server        a command, split like a shell would but run without one
    http://127.0.0.1:8000/mcp        Streamable HTTP
    sse:http://127.0.0.1:8000/sse    the deprecated HTTP+SSE transport of 2024-11-05
    path/to/target.toml              everything one string cannot say (env, headers, secrets, timeouts)

Bad input raises `UsageError` with a one-line message (exit code 2); nothing here starts a process.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from conformance.text import closest

Kind = Literal["stdio", "http", "sse"]


class UsageError(Exception):
    """A bad command line or target file: exit code 2 with this one-line message."""


@dataclass(frozen=True)
class Target:
    kind: Kind
    argv: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    #: Values that must never reach a transcript, report or log.
    secrets: tuple[str, ...] = ()
    #: Per-request seconds and the start budget (a started server's first answer) from the target
    #: file's `[timeouts]`; None leaves them to `--timeout` and `--start-timeout`.
    request_timeout: float | None = None
    start_timeout: float | None = None
    #: Seconds of wall time the target may take (`[timeouts] target`); None leaves it to `--target-budget`.
    target_budget: float | None = None
    max_message_bytes: int = 16 * 1024 * 1024
    #: A command that starts an HTTP server and prints `LISTENING <url>`; the url is then the target.
    launch: tuple[str, ...] = ()
    label: str = ""
    #: The target claims the experimental features and extensions it is judged on (`experimental =
    #: true`): their cases fail the run like any other (`--experimental` does so for every target).
    experimental: bool = False
    #: Free-form settings for profiles (fixture controller, discovery location): read by the suites.
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: The `--server` string of a target file, so a printed replay command can name the same target.
    spec: str = ""

    @property
    def transport(self) -> str:
        return self.kind

    def describe(self) -> str:
        if self.label:
            return self.label
        if self.kind == "stdio":
            return "stdio:" + shlex.join(self.argv)
        if self.launch:
            return f"{self.kind}:launched:" + shlex.join(self.launch)
        return ("sse:" if self.kind == "sse" else "") + self.url

    def with_url(self, url: str) -> Target:
        return replace(self, url=url)

    def with_budgets(self, request: float, start: float) -> Target:
        """This target with both time budgets settled (what the engine and every suite then use)."""
        return replace(self, request_timeout=request, start_timeout=start)


def parse_targets(spec: str) -> list[Target]:
    """Turn `--server` into its targets: one, or every target a `[[targets]]` file lists."""
    stripped = spec.strip()
    if stripped.endswith(".toml"):
        return [replace(target, spec=stripped) for target in load_targets(Path(stripped))]
    return [parse_target(spec)]


def parse_target(spec: str) -> Target:
    """Turn `--server` into a Target; raise UsageError for anything malformed."""
    spec = spec.strip()
    if not spec:
        raise UsageError("--server is empty; give stdio:COMMAND, an http(s) URL, sse:URL or a .toml file")
    if spec.startswith("stdio:"):
        return Target(kind="stdio", argv=_split_command(spec[len("stdio:") :]))
    if spec.startswith("sse:"):
        return Target(kind="sse", url=_check_url(spec[len("sse:") :]))
    if spec.startswith(("http://", "https://")):
        return Target(kind="http", url=_check_url(spec))
    if spec.endswith(".toml"):
        return replace(load_target_file(Path(spec)), spec=spec)
    if _names_a_command(spec):
        raise UsageError(
            f"cannot read --server {spec!r}: it names a command; to run it over stdio, give "
            f"--server {shlex.quote('stdio:' + spec)}"
        )
    raise UsageError(
        f"cannot read --server {spec!r}: use stdio:COMMAND, http://HOST:PORT/PATH, sse:URL or FILE.toml"
    )


def _names_a_command(spec: str) -> bool:
    """Whether `spec` is a command line whose program is on PATH (or an executable file): the user
    meant `stdio:` and left it out (`--server mcp-server-time`). Nothing is started."""
    import shutil

    try:
        argv = shlex.split(spec)
    except ValueError:
        return False
    return bool(argv) and shutil.which(argv[0]) is not None


def _split_command(text: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"cannot split the stdio command: {exc}") from None
    if not argv:
        raise UsageError("stdio: needs a command, for example stdio:python -m my_server")
    return argv


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) URL with a host: {url!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise UsageError(f"bad port in URL {url!r}") from None
    return url


def load_target_file(path: Path) -> Target:
    """Read a TOML target file of one target (`[target]`); a file of many (`[[targets]]`) is refused
    here, with the way to run it: `load_targets` reads both."""
    targets = load_targets(path)
    if len(targets) != 1:
        raise UsageError(f"{path}: lists {len(targets)} targets ([[targets]]); give it to `run --server`")
    return targets[0]


def load_targets(path: Path) -> list[Target]:
    """Read a TOML target file: one `[target]`, or many `[[targets]]` in file order, each with its own
    env, headers, label and, over the file's top-level tables, its own `timeouts`, `limits` and
    `controller`. Secret values come from environment variables, never from the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"target file not found: {path}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read target file {path}: {exc}") from None
    check_target_file(data, str(path))
    if isinstance(data.get("target"), dict):
        return [_file_target(data["target"], "target", data, path)]
    entries = data.get("targets")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: needs a [target] table with `command` or `url`")
    targets = [_file_target(entry, f"targets[{i}]", data, path) for i, entry in enumerate(entries)]
    seen: dict[str, int] = {}
    for i, target in enumerate(targets):
        # A report names a target by this description: two alike could not be told apart (nor merged).
        first = seen.setdefault(target.describe(), i)
        if first != i:
            raise UsageError(
                f"{path}: targets[{i}] is described as targets[{first}] is "
                f"({target.describe()!r}); give each a `label` of its own"
            )
    return targets


def _file_target(section: dict[str, Any], where: str, data: dict[str, Any], path: Path) -> Target:
    """One target of a file: `section` is its [target] table or a [[targets]] entry (`where`)."""
    secrets: list[str] = []

    env = _str_table(section.get("env", {}), f"{path}: [{where}.env]")
    for name, var in _str_table(section.get("env_from", {}), f"{path}: [{where}.env_from]").items():
        env[name] = _from_environment(var, path)
        secrets.append(env[name])
    headers = _str_table(section.get("headers", {}), f"{path}: [{where}.headers]")
    for name, var in _str_table(
        section.get("headers_from_env", {}), f"{path}: [{where}.headers_from_env]"
    ).items():
        headers[name] = _from_environment(var, path)
        secrets.append(headers[name])
    for name, value in headers.items():
        if name.lower() in ("authorization", "proxy-authorization", "cookie"):
            secrets.append(value)
            secrets.extend(part for part in value.split() if len(part) >= 8)
    for name in section.get("secret_env", []):
        if name in env:
            secrets.append(env[name])

    # An entry's own tables replace the file's (a [[targets]] entry only: [target] has none).
    timeouts = section.get("timeouts", data.get("timeouts", {}))
    limits = section.get("limits", data.get("limits", {}))
    at = "" if where == "target" else f"{where}."
    settings = {k: v for k, v in data.items() if k not in ("target", "targets", "timeouts", "limits")}
    if "controller" in section:
        settings["controller"] = section["controller"]
    common: dict[str, Any] = {
        "env": env,
        "headers": headers,
        "secrets": tuple(dict.fromkeys(s for s in secrets if s)),
        "request_timeout": _number(timeouts.get("request"), f"{path}: {at}timeouts.request"),
        "start_timeout": _number(timeouts.get("start"), f"{path}: {at}timeouts.start"),
        "target_budget": _number(timeouts.get("target"), f"{path}: {at}timeouts.target"),
        "max_message_bytes": int(limits.get("max_message_bytes", 16 * 1024 * 1024)),
        "label": str(section.get("label", "")),
        "experimental": bool(section.get("experimental", False)),
        "settings": settings,
    }
    cwd = section.get("cwd")
    if cwd is not None:
        common["cwd"] = str((path.parent / cwd).resolve())
    command, url = section.get("command"), section.get("url")
    transport = section.get("transport")
    if command is not None and url is None:
        argv = _argv(command, path)
        if transport in ("http", "sse"):
            return Target(kind=transport, launch=argv, **common)
        return Target(kind="stdio", argv=argv, **common)
    if url is not None and command is None:
        kind: Kind = "sse" if transport == "sse" else "http"
        return Target(kind=kind, url=_check_url(str(url)), **common)
    raise UsageError(f"{path}: [{where}] needs exactly one of `command` and `url`")


def check_target_file(data: Mapping[str, Any], where: str) -> None:
    """Validate a parsed target file: the core's tables against `target-file.schema.json`, each profile
    table against the schema of the pack that declares it (`Pack.settings`). Raise UsageError with one
    line naming the file, the key path and what is wrong, with a "did you mean" hint for a typo."""
    from conformance import schemas
    from conformance.model import packs

    tables = packs.settings_tables()
    core = {key: value for key, value in data.items() if key not in tables}
    problem = _problem(schemas.TARGET_FILE_ID, core, (), extra=tuple(tables))
    for table, (_, schema_id) in tables.items():
        if problem is None and table in data:
            problem = _problem(schema_id, data[table], (table,))
    if problem is not None:
        raise UsageError(f"{where}: {problem}")


def _problem(
    schema_id: str, instance: Any, prefix: tuple[str, ...], extra: tuple[str, ...] = ()
) -> str | None:
    """The first violation of a schema, said for a person; `extra` are top-level names allowed too."""
    from jsonschema import Draft202012Validator

    from conformance import schemas

    validator = Draft202012Validator({"$ref": schema_id}, registry=schemas.registry())
    found = sorted(validator.iter_errors(instance), key=lambda e: _order(instance, e))
    if not found:
        return None
    return _say(found[0], prefix, extra if not prefix else ())


def _order(instance: Any, error: Any) -> tuple[Any, ...]:
    """Errors in the file's own order (tomllib keeps it), an unknown key before the rest at one place."""
    place: list[int] = []
    node = instance
    for part in error.absolute_path:
        keys = (
            list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        )
        place.append(keys.index(part) if part in keys else len(keys))
        node = node[part] if isinstance(node, dict | list) else None
    return (*place, -1 if error.validator == "additionalProperties" else 0)


_NOUNS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "object": "a table",
    "array": "an array",
    "boolean": "true or false",
}


def _say(error: Any, prefix: tuple[str, ...], extra: tuple[str, ...]) -> str:
    at = (*prefix, *error.absolute_path)
    key, value, schema, kind = _dotted(at), error.instance, error.schema, error.validator
    if kind == "additionalProperties" and schema.get("additionalProperties") is False:
        allowed = [*schema.get("properties", {}), *(extra if not at else ())]
        unknown = next(name for name in value if name not in allowed)
        what = "table" if isinstance(value[unknown], dict) else "key"
        return f"unknown {what} {_dotted((*at, unknown))} ({_hint(unknown, allowed, at)})"
    if kind == "required":
        missing = next(name for name in schema["required"] if name not in value)
        if not at:
            return f"needs a [{missing}] table with `command` or `url`"
        return f"[{key}] needs `{missing}`"
    if kind == "oneOf" and not at:  # the file itself: [target], [[targets]] or a client's table alone
        if "target" in value and "targets" in value:
            return "has both [target] and [[targets]]: use [[targets]] alone for many targets"
        return "needs a [target] table with `command` or `url` (or [[targets]] tables, one per target)"
    if kind == "oneOf" and all(set(branch) == {"required"} for branch in schema["oneOf"]):
        names = " and ".join(f"`{branch['required'][0]}`" for branch in schema["oneOf"])
        return f"{key if isinstance(at[-1], int) else f'[{key}]'} needs exactly one of {names}"
    if kind == "anyOf":
        # The branch of the value's own type explains it best (an array holding a number); else
        # say every type the value may have.
        fitting = [e for e in error.context if e.relative_schema_path[0] in _same_type(error)]
        if fitting:
            return _say(min(fitting, key=lambda e: -len(e.absolute_path)), prefix, extra)
        types = " or ".join(
            dict.fromkeys(_NOUNS.get(b.get("type", ""), "something else") for b in schema["anyOf"])
        )
        return f"{key} must be {types} (got {_shown(value)})"
    if kind == "type" and at == ("targets",):
        return f"targets must be an array of tables, one [[targets]] per target (got {_shown(value)})"
    if kind == "type":
        named = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        nouns = " or ".join(_NOUNS.get(str(t), str(t)) for t in named)
        return f"{key} must be {nouns} (got {_shown(value)})"
    if kind == "enum":
        return (
            f"{key} must be one of {', '.join(json.dumps(v) for v in schema['enum'])} (got {_shown(value)})"
        )
    if kind in ("exclusiveMinimum", "minimum"):
        bound = schema[kind]
        relation = "more than" if kind == "exclusiveMinimum" else "at least"
        return f"{key} must be {relation} {bound} (got {_shown(value)})"
    if kind in ("minItems", "minLength"):
        return f"{key} must not be empty"
    if kind == "pattern":
        wanted = (
            "an http(s) URL" if schema["pattern"] == "^https?://" else f"text matching {schema['pattern']}"
        )
        return f"{key} must be {wanted} (got {_shown(value)})"
    return f"{key or 'the file'}: {error.message}"


def _same_type(error: Any) -> set[int]:
    """Which branches of an anyOf accept the value's type."""
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.TYPE_CHECKER
    return {
        index
        for index, branch in enumerate(error.schema["anyOf"])
        if "type" in branch and checker.is_type(error.instance, branch["type"])
    }


def _hint(name: str, allowed: list[str], at: tuple[Any, ...]) -> str:
    """ "did you mean X?" from the names allowed here, else from the keys of every other table (a key
    in the wrong table, or above every table), else the names allowed here."""
    close = closest(name, allowed)
    if close:
        return f"did you mean {close[0]}?"
    elsewhere = {
        dotted: last for dotted, last in _every_key().items() if dotted.rpartition(".")[0] != _dotted(at)
    }
    close = closest(name, elsewhere.values())
    if close:
        return f"did you mean {next(d for d, last in elsewhere.items() if last == close[0])}?"
    return f"known here: {', '.join(allowed) or 'none'}"


def _every_key() -> dict[str, str]:
    """`table.key` -> key for every key of the core's tables and of every pack's."""
    from conformance import schemas
    from conformance.model import packs

    tables = dict(schemas.schema(schemas.TARGET_FILE_ID)["properties"])
    tables.update(
        {table: schemas.schema(schema_id) for table, (_, schema_id) in packs.settings_tables().items()}
    )
    return {f"{table}.{key}": key for table, schema in tables.items() for key in schema.get("properties", {})}


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _dotted(path: tuple[Any, ...]) -> str:
    """A TOML key path: `target.env.LOG_LEVEL`, `target.headers."X.Y"`, `target.command[1]`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = part if _BARE.match(part) else json.dumps(part)
            text += f".{name}" if text else name
    return text


def _shown(value: Any) -> str:
    """A value as the user wrote it, with its TOML type: `string "ten"`, `integer 0`, `a table`."""
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return f"string {text if len(text) <= 60 else text[:57] + '...'}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value}"  # TOML dates and times


def _argv(command: Any, path: Path) -> tuple[str, ...]:
    if isinstance(command, str):
        return _split_command(command)
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return tuple(command)
    raise UsageError(f"{path}: `command` must be a string or a non-empty list of strings")


def _str_table(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where} must be a table of strings")
    return dict(value)


def _from_environment(var: str, path: Path) -> str:
    value = os.environ.get(var)
    if value is None:
        raise UsageError(f"{path}: environment variable {var} is not set")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UsageError(f"{where} must be a positive number of seconds")
    return float(value)


def reference_targets(suite: str) -> list[Target]:
    """The embedded default for a suite: its reference server over stdio and over HTTP.

    A stateful reference (a pack that names a fixture controller) gets one state file per target,
    passed as `--db FILE` to every process of the reference and to its controller, which the target's
    `[controller]` setting names. The files live in a temporary folder removed when the harness exits.
    """
    from conformance.model import packs

    pack = packs.get(suite)
    command = tuple(pack.reference_command())
    controller = pack.controller_command()
    state: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {"stdio": ((), {}), "http": ((), {})}
    if controller:
        folder = _state_folder()
        for kind in state:
            db = ("--db", os.path.join(folder, f"{suite}-{kind}.db"))
            state[kind] = (db, {"controller": {"command": [*controller, *db]}})
    setup = pack.reference_setup_hook()
    if setup is not None:
        folder = _state_folder()
        for kind in state:
            args, settings = setup(kind, folder)
            state[kind] = ((*state[kind][0], *args), {**state[kind][1], **settings})
    stdio_args, stdio_settings = state["stdio"]
    http_args, http_settings = state["http"]
    targets = [
        Target(
            kind="stdio",
            argv=(*command, *stdio_args),
            label=f"{suite} reference (stdio)",
            settings=stdio_settings,
        ),
        Target(
            kind="http",
            launch=(*command, "--http", "--port", "0", *http_args),
            label=f"{suite} reference (http)",
            settings=http_settings,
        ),
    ]
    return [t for t in targets if t.kind in pack.reference_transports]


def _state_folder() -> str:
    """A fresh temporary folder for reference state files, removed (with its contents) at exit."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="mcp-conformance-state-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
