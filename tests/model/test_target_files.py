"""Target files are validated when they are read: the core's tables against
`conformance/schemas/target-file.schema.json`, each profile table against the schema of the pack that
declares it. A typo is exit 2 with one line naming the file, the key and the name it was likely meant
to be; nothing in a target file is silently ignored."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.fixtures.client import ControllerConfig
from conformance.model import packs
from conformance.model.targets import (
    UsageError,
    check_target_file,
    load_target_file,
    load_targets,
    parse_targets,
    reference_targets,
)

CLI = [sys.executable, "-m", "conformance"]
SERVER = '[target]\ncommand = ["python", "-m", "my_server"]\n'


def run_with(tmp_path: Path, text: str) -> str:
    """`run --server target.toml` from the file's folder: exit 2 and the one stderr line."""
    (tmp_path / "target.toml").write_text(text, encoding="utf-8")
    result = subprocess.run(
        [*CLI, "run", "--server", "target.toml", "--report-dir", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "out").exists(), "a configuration error writes no report"
    return lines[0]


def problem(tmp_path: Path, text: str) -> str:
    """The UsageError of reading this target file, without the file name."""
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_target_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message.removeprefix(f"{path}: ")


# --------------------------------------------------------------------------- the report's four typos


def test_a_misspelt_key_of_target(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + 'lable = "staging"\n')
    assert line == "mcp-conformance: target.toml: unknown key target.lable (did you mean label?)"


def test_a_misspelt_table(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + "[timeout]\nrequest = 5\n")
    assert line == "mcp-conformance: target.toml: unknown table timeout (did you mean timeouts?)"


def test_a_misspelt_subtable(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + '[target.evn]\nLOG_LEVEL = "warning"\n')
    assert line == "mcp-conformance: target.toml: unknown table target.evn (did you mean env?)"


def test_a_misspelt_timeout(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + "[timeouts]\nrequets = 5\n")
    assert line == "mcp-conformance: target.toml: unknown key timeouts.requets (did you mean request?)"


def test_a_key_in_the_wrong_place_is_pointed_to_where_it_belongs(tmp_path: Path) -> None:
    # Above every table (TOML puts it at the top level), or in [target]: `request` is a [timeouts] key.
    line = run_with(tmp_path, "requets = 5\n" + SERVER)
    assert line == "mcp-conformance: target.toml: unknown key requets (did you mean timeouts.request?)"
    assert problem(tmp_path, SERVER + "request = 5\n") == (
        "unknown key target.request (did you mean timeouts.request?)"
    )


# --------------------------------------------------------------------------- types and values


def test_a_wrong_type(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + '[timeouts]\nrequest = "ten"\n')
    assert line == 'mcp-conformance: target.toml: timeouts.request must be a number (got string "ten")'


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (SERVER + "[timeouts]\nstart = 0\n", "timeouts.start must be more than 0 (got integer 0)"),
        (SERVER + "[timeouts]\nrequest = true\n", "timeouts.request must be a number (got boolean true)"),
        (SERVER + "[limits]\nmax_message_bytes = 1.5\n", "limits.max_message_bytes must be an integer"),
        ('[target]\ncommand = ["python", 5]\n', "target.command[1] must be a string (got integer 5)"),
        ("[target]\ncommand = 5\n", "target.command must be a string or an array (got integer 5)"),
        ("[target]\ncommand = []\n", "target.command must not be empty"),
        ('[target]\ncommand = "x"\ntransport = "htp"\n', 'target.transport must be one of "stdio", "http"'),
        ('[target]\nurl = "ftp://example.com"\n', "target.url must be an http(s) URL"),
        ('[target]\ncommand = "x"\nurl = "http://127.0.0.1:9/mcp"\n', "[target] needs exactly one of"),
        ('[target]\nlabel = "x"\n', "[target] needs exactly one of `command` and `url`"),
        (
            '[target]\ncommand = "x"\nlabel = 2026-01-01\n',
            "target.label must be a string (got date 2026-01-01)",
        ),
        (SERVER + '[target.env]\n"A.B" = 5\n', 'target.env."A.B" must be a string (got integer 5)'),
        (SERVER + "[target.headers_from_env]\nAuthorization = 1\n", "target.headers_from_env.Authorization"),
        ("[targetz]\ncommand = 'x'\n", "unknown table targetz (did you mean target?)"),
        ("[targets]\ncommand = 'x'\n", "targets must be an array of tables, one [[targets]] per target"),
        ("targets = []\n", "targets must not be empty"),
        ('[[targets]]\ncommand = "a"\nlable = "x"\n', "unknown key targets[0].lable (did you mean label?)"),
        ('[[targets]]\nlabel = "x"\n', "targets[0] needs exactly one of `command` and `url`"),
        (
            '[[targets]]\ncommand = "x"\n[targets.timeouts]\nrequest = "ten"\n',
            'targets[0].timeouts.request must be a number (got string "ten")',
        ),
        (SERVER + '[[targets]]\ncommand = "y"\n', "has both [target] and [[targets]]"),
        ('[[targets]]\ncommand = "x"\n[[targets]]\ncommand = "x"\n', "targets[1] is described as targets[0]"),
        ("", "needs a [target] table with `command` or `url`"),
    ],
)
def test_core_table_problems_are_one_line(tmp_path: Path, text: str, said: str) -> None:
    assert said in problem(tmp_path, text)


def test_the_controller_table_is_checked_as_it_is_read(tmp_path: Path) -> None:
    assert problem(tmp_path, SERVER + '[controller]\ncommand = "c"\ntimout = 3\n') == (
        "unknown key controller.timout (did you mean timeout?)"
    )
    assert problem(tmp_path, SERVER + "[controller]\ntimeout = 3\n") == (
        "[controller] needs exactly one of `command` and `url`"
    )
    assert "controller.url must be an http(s) URL" in problem(
        tmp_path, SERVER + '[controller]\nurl = "file:///x"\n'
    )


# --------------------------------------------------------------------------- profile tables


def test_a_profile_table_with_a_misspelt_key(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + '[dw-discovery]\nresouce = "dw://mcp/discovery"\n')
    assert line == ("mcp-conformance: target.toml: unknown key dw-discovery.resouce (did you mean resource?)")


def test_a_table_no_installed_pack_declares(tmp_path: Path) -> None:
    line = run_with(tmp_path, SERVER + '[uwmdd]\ndeal_id = "uw_demo_harbor"\n')
    assert line == "mcp-conformance: target.toml: unknown table uwmdd (did you mean uwmd?)"
    said = problem(tmp_path, SERVER + "[nothing-like-it]\nx = 1\n")
    assert said.startswith(
        "unknown table nothing-like-it (known here: target, targets, timeouts, limits, controller"
    )
    assert "dw-discovery" in said and "map" in said and "uwmd" in said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[uwmd]\ndeal = "x"\n', "unknown key uwmd.deal (did you mean deal_id?)"),
        ('[uwmd]\nrace_rounds = "many"\n', 'uwmd.race_rounds must be an integer (got string "many")'),
        ("[map]\nrace_rounds = 0\n", "map.race_rounds must be at least 1 (got integer 0)"),
        ('[map]\nrefrence = "urn:x"\n', "unknown key map.refrence (did you mean reference?)"),
        ("[dw-discovery]\npreview_arguments = [1]\n", "dw-discovery.preview_arguments[0] must be a table"),
        ("[dw-discovery]\npreview_arguments = 1\n", "must be a table or an array (got integer 1)"),
        ("[dw-discovery.smoke_arguments]\ntool = 5\n", "dw-discovery.smoke_arguments.tool must be a table"),
    ],
)
def test_profile_table_problems_are_one_line(tmp_path: Path, text: str, said: str) -> None:
    assert said in problem(tmp_path, SERVER + text)


def test_a_profile_table_that_is_not_a_table(tmp_path: Path) -> None:
    assert problem(tmp_path, "uwmd = 5\n" + SERVER) == "uwmd must be a table (got integer 5)"


def test_every_key_the_profiles_read_is_allowed(tmp_path: Path) -> None:
    """The schemas say exactly what the code reads: a key a check reads is never refused."""
    from conformance_packs.dw_discovery import locate
    from conformance_packs.uwmd.common import SETTINGS

    def keys(table: str) -> set[str]:
        return set(schemas.schema(packs.settings_tables()[table][1])["properties"])

    assert keys("dw-discovery") == set(locate._KNOWN_KEYS)
    assert keys("uwmd") == {name for name, _ in SETTINGS.values()} | {"parkview_deal_id", "race_rounds"}
    assert keys("map") == {"reference", "contract", "race_rounds"}
    controller = set(schemas.schema(schemas.TARGET_FILE_ID)["properties"]["controller"]["properties"])
    assert controller == {f.name for f in dataclasses.fields(ControllerConfig)}
    full = (
        SERVER
        + '[dw-discovery]\nresource = "dw://d"\ntool = "t"\ntool_arguments = {a = 1}\nurl = "http://x"\n'
        'file = "f.json"\nbaseline = "b.json"\npreview_tool = "p"\npreview_arguments = [{a = 1}, {b = 2}]\n'
        "smoke_arguments = {t = {a = 1}}\n"
        '[map]\nreference = "urn:r"\ncontract = "c.json"\nrace_rounds = 50\n'
        '[uwmd]\ndeal_id = "a"\nnodebt_deal_id = "b"\ncanary_deal_id = "c"\ndefect_deal_id = "d"\n'
        'parkview_deal_id = "e"\nrace_rounds = 50\n'
        '[controller]\nurl = "http://127.0.0.1:9/fixture"\ntimeout = 2.5\n'
    )
    path = tmp_path / "full.toml"
    path.write_text(full, encoding="utf-8")
    settings = load_target_file(path).settings
    assert set(settings) == {"dw-discovery", "map", "uwmd", "controller"}


def test_the_embedded_reference_targets_pass_the_same_schemas() -> None:
    for suite in ("base", "map-review", "uwmd"):
        for target in reference_targets(suite):
            check_target_file(
                {"target": {"command": list(target.argv or target.launch)}, **target.settings}, suite
            )


# --------------------------------------------------------------------------- pack declarations


def _pack(name: str, settings: dict[str, str], package: str = "conformance_packs.uwmd") -> packs.Pack:
    return packs.Pack(name=name, package=package, description="", checks=(), settings=settings)


def test_a_pack_declares_its_tables_with_a_schema_of_its_own() -> None:
    tables = packs.declared_tables([_pack("p", {"deals": "urn:mcp-conformance:uwmd-target:1"})])
    assert tables == {"deals": ("p", "urn:mcp-conformance:uwmd-target:1")}
    with pytest.raises(packs.PackError, match=r"schema 'urn:mcp-conformance:map-review-target:1'.*schemas/"):
        packs.declared_tables([_pack("p", {"deals": "urn:mcp-conformance:map-review-target:1"})])
    with pytest.raises(packs.PackError, match=r"the core's target-file table \[controller\]"):
        packs.declared_tables([_pack("p", {"controller": "urn:mcp-conformance:uwmd-target:1"})])
    twice = [_pack(n, {"deals": "urn:mcp-conformance:uwmd-target:1"}) for n in ("p", "q")]
    with pytest.raises(
        packs.PackError, match=r"suite 'q' declares the target-file table \[deals\] of suite 'p'"
    ):
        packs.declared_tables(twice)


def test_the_target_file_schema_is_closed_everywhere() -> None:
    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, where
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(schemas.schema(schemas.TARGET_FILE_ID), "target-file")
    for _, schema_id in packs.settings_tables().values():
        walk(schemas.schema(schema_id), schema_id)
    core = schemas.schema(schemas.TARGET_FILE_ID)
    assert core["$id"] == "urn:mcp-conformance:target-file:1"
    assert core["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_readme_shows_the_lines_these_tests_see() -> None:
    readme = (Path(__file__).resolve().parents[1].parent / "README.md").read_text(encoding="utf-8")
    shown = [line for line in readme.splitlines() if line.startswith("mcp-conformance: target.toml: ")]
    assert len(shown) >= 4
    source = Path(__file__).read_text(encoding="utf-8")
    for line in shown:
        assert line.removeprefix("mcp-conformance: target.toml: ") in source, line


# --------------------------------------------------------------------------- many targets in one file

MANY = """
[[targets]]
command = ["python", "-m", "server_a"]
label = "a"
[targets.env]
MODE = "a"

[[targets]]
url = "http://127.0.0.1:8000/mcp"
label = "b"
[targets.headers_from_env]
Authorization = "MANY_TARGETS_TOKEN"
[targets.timeouts]
request = 3
[targets.controller]
url = "http://127.0.0.1:8001/fixtures"

[timeouts]
request = 7
start = 20

[controller]
command = "python -m controller"
"""


def test_a_file_of_many_targets_gives_each_its_own_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MANY_TARGETS_TOKEN", "Bearer s3cret-token-value")
    path = tmp_path / "many.toml"
    path.write_text(MANY, encoding="utf-8")
    a, b = load_targets(path)
    assert (a.kind, a.argv, a.label, dict(a.env)) == (
        "stdio",
        ("python", "-m", "server_a"),
        "a",
        {"MODE": "a"},
    )
    assert (b.kind, b.url, b.label, dict(b.env)) == ("http", "http://127.0.0.1:8000/mcp", "b", {})
    # The file's [timeouts] and [controller] are every target's, unless an entry has its own.
    assert (a.request_timeout, a.start_timeout) == (7.0, 20.0)
    assert (b.request_timeout, b.start_timeout) == (3.0, None)
    assert a.settings["controller"] == {"command": "python -m controller"}
    assert b.settings["controller"] == {"url": "http://127.0.0.1:8001/fixtures"}
    assert "s3cret-token-value" in b.secrets and not a.secrets
    assert [t.spec for t in parse_targets(str(path))] == [str(path), str(path)]
    with pytest.raises(UsageError, match=r"lists 2 targets"):
        load_target_file(path)


def test_a_target_claims_experimental_features(tmp_path: Path) -> None:
    # `experimental = true` makes the target's experimental and extension cases fail the run like any
    # other (conformance.engine.runner.claimed); a value that is not a boolean is one line, exit 2.
    path = tmp_path / "target.toml"
    path.write_text(SERVER + "experimental = true\n", encoding="utf-8")
    (target,) = load_targets(path)
    assert target.experimental
    path.write_text(SERVER, encoding="utf-8")
    assert not load_targets(path)[0].experimental
    said = run_with(tmp_path, SERVER + 'experimental = "yes"\n')
    assert "target.experimental must be true or false" in said, said
