"""The fixture controller protocol: the implementer's helper, the harness's client, and SKIP `needs:`.

A check that needs a hook the target lacks must SKIP naming the hook, never PASS; a controller that
breaks the protocol must end the check ERROR, never become a verdict about the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.fixtures import Controller, HookError
from conformance.fixtures.client import (
    ControllerClient,
    ControllerConfig,
    ControllerConfigError,
    ControllerError,
    HookFailed,
)
from conformance.fixtures.protocol import SCHEMA_ID
from conformance.model.targets import load_target_file
from conformance_reference.map_controller import build_controller
from conformance_reference.map_state import MapStore
from tests.map_helpers import CONTROLLER, checks, run, target

PY = sys.executable
ALL_HOOKS = {
    "create_review",
    "expire",
    "mutate_terms",
    "publication_jobs",
    "reset",
    "review_state",
    "revoke_permission",
    "second_account",
    "set_clock",
    "withdraw",
}


def sample() -> Controller:
    controller = Controller("sample")

    @controller.hook
    def reset(params: dict[str, Any]) -> None:
        return None

    @controller.hook("create_review")
    def create(params: dict[str, Any]) -> dict[str, Any]:
        if "tenant" in params:
            raise HookError("unsupported", "one tenant only")
        return {"review_id": "r1", "reference": "urn:x:r1"}

    @controller.hook
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("database is down")

    return controller


# --------------------------------------------------------------------------- the helper


def test_helper_answers_hello_hooks_and_errors() -> None:
    controller = sample()
    hello = controller.handle({"v": 1, "id": 1, "hook": "hello", "params": {"versions": [1]}})
    assert hello == {
        "v": 1,
        "id": 1,
        "ok": True,
        "result": {"versions": [1], "name": "sample", "hooks": ["broken", "create_review", "reset"]},
    }
    assert controller.handle({"v": 1, "id": 2, "hook": "reset"})["result"] == {}
    assert controller.handle({"v": 1, "id": 3, "hook": "create_review", "params": {"tenant": "other"}})[
        "error"
    ] == {"code": "unsupported", "message": "one tenant only"}
    failed = controller.handle({"v": 1, "id": 4, "hook": "broken", "params": {}})
    assert failed["error"] == {"code": "failed", "message": "RuntimeError: database is down"}
    assert controller.handle({"v": 1, "id": 5, "hook": "nope"})["error"]["code"] == "unknown_hook"
    assert controller.handle({"v": 2, "id": 6, "hook": "reset"})["error"]["code"] == "version"
    assert controller.handle([1])["error"]["code"] == "bad_request"
    assert json.loads(controller.handle_bytes(b"{not json"))["error"]["code"] == "bad_request"
    for message in (hello, failed):
        assert schemas.errors(SCHEMA_ID, "response", message) == []


def test_helper_refuses_double_registration_and_hello() -> None:
    controller = sample()
    with pytest.raises(ValueError):
        controller.add("reset", lambda p: {})
    with pytest.raises(ValueError):
        controller.add("hello", lambda p: {})


def test_helper_serves_json_lines() -> None:
    lines = b'{"v":1,"id":1,"hook":"hello"}\n\n{"v":1,"id":2,"hook":"create_review","params":{}}\n'
    out = io.BytesIO()
    assert sample().serve_stdio(io.BytesIO(lines), out) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"] == {"review_id": "r1", "reference": "urn:x:r1"}


def test_helper_http_is_loopback_only() -> None:
    with pytest.raises(SystemExit):
        sample().serve_http("0.0.0.0")


# --------------------------------------------------------------------------- the client


def test_config_from_target_file(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        '[target]\ncommand = ["my-server"]\n\n'
        '[controller]\ncommand = ["my-controller", "--db", "x"]\ntimeout = 3\n'
    )
    config = ControllerConfig.from_settings(load_target_file(path).settings)
    assert config == ControllerConfig(command=("my-controller", "--db", "x"), timeout=3.0)
    assert ControllerConfig.from_settings({}) is None
    assert ControllerConfig.from_settings(
        {"controller": {"url": "http://127.0.0.1:9/fixture"}}
    ) == ControllerConfig(url="http://127.0.0.1:9/fixture")
    for bad in (
        {"controller": "x"},
        {"controller": {}},
        {"controller": {"command": ["a"], "url": "http://h/"}},
        {"controller": {"command": []}},
        {"controller": {"url": "ftp://h/"}},
        {"controller": {"command": ["a"], "timeout": 0}},
        {"controller": {"command": ["a"], "env": {"A": 1}}},
    ):
        with pytest.raises(ControllerConfigError):
            ControllerConfig.from_settings(bad)


def test_client_over_the_reference_controller(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = ControllerConfig(command=(*CONTROLLER, "--db", str(tmp_path / "s.db")))
        client = await ControllerClient.connect(config)
        try:
            assert client.hooks == ALL_HOOKS
            created = await client.call("create_review", {"content_text": "# Café 😀\n"})
            jobs = await client.call("publication_jobs", {"review_id": created["review_id"]})
            assert jobs == {"jobs": []}
            with pytest.raises(HookFailed) as failed:
                await client.call("mutate_terms", {"review_id": created["review_id"], "term": "colour"})
            assert failed.value.code == "unsupported"
            with pytest.raises(HookFailed) as missing:
                await client.call("withdraw", {"review_id": "no-such-review"})
            assert missing.value.code == "not_found"
            assert [h.hook for h in client.history][-2:] == ["mutate_terms", "withdraw"]
        finally:
            await client.close()
        assert client._proc is not None and client._proc.returncode is not None

    asyncio.run(asyncio.wait_for(scenario(), 300))


@contextlib.contextmanager
def http_controller(db: Path) -> Iterator[str]:
    proc = subprocess.Popen([*CONTROLLER, "--db", str(db), "--http"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("LISTENING http://127.0.0.1:")
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_client_over_http(tmp_path: Path) -> None:
    with http_controller(tmp_path / "s.db") as url:

        async def scenario() -> None:
            client = await ControllerClient.connect(ControllerConfig(url=url))
            try:
                assert "set_clock" in client.hooks
                assert (await client.call("set_clock", {"now": "2026-10-02T00:00:00.250Z"}))[
                    "now"
                ].startswith("2026-10-02T00:00:00.")
                assert (await client.call("review_state", {"review_id": "p7"})) == {
                    "state": "awaiting_review",
                    "revision": "p7-r4",
                }
            finally:
                await client.close()

        asyncio.run(asyncio.wait_for(scenario(), 300))


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("import sys; sys.stdin.readline(); print('hello there', flush=True)", "not JSON"),
        ('import sys; sys.stdin.readline(); print(\'{"v": 1, "id": 1}\', flush=True)', "malformed"),
        ("import sys; sys.stdin.readline(); sys.exit(3)", "exited"),
        ("import time, sys; sys.stdin.readline(); time.sleep(60)", "did not answer"),
    ],
)
def test_client_reports_a_broken_controller(script: str, expected: str) -> None:
    # Only the controller that never answers needs a timeout to fire: a small one, deliberately. The
    # others answer (or exit) once Python has started, which a busy machine can take seconds to do.
    timeout = 1.0 if expected == "did not answer" else 120.0

    async def scenario() -> None:
        config = ControllerConfig(command=(PY, "-c", script), timeout=timeout)
        client = ControllerClient(config)
        await client._start()
        try:
            with pytest.raises(ControllerError) as failed:
                await client._exchange("hello", {}, timeout=timeout)
            assert expected in str(failed.value)
        finally:
            await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 300))


def test_client_cannot_start_a_missing_command() -> None:
    async def scenario() -> None:
        with pytest.raises(ControllerError, match="cannot start"):
            await ControllerClient.connect(ControllerConfig(command=("/nonexistent/controller",)))

    asyncio.run(scenario())


def test_every_map_hook_result_of_the_reference_is_schema_valid(tmp_path: Path) -> None:
    controller = build_controller(MapStore(str(tmp_path / "s.db")))
    created = controller.handle({"v": 1, "id": 1, "hook": "create_review", "params": {"account": "second"}})
    rid = created["result"]["review_id"]
    calls = {
        "create_review": {},
        "mutate_terms": {"review_id": rid, "term": "visibility"},
        "set_clock": {"now": None},
        "second_account": {},
        "review_state": {"review_id": rid},
        "publication_jobs": {"review_id": rid},
    }
    for index, (hook, params) in enumerate(calls.items(), start=2):
        answer = controller.handle({"v": 1, "id": index, "hook": hook, "params": params})
        assert answer["ok"], answer
        if f"hook.{hook}.params" in schemas.schema("urn:mcp-conformance:map-review:1")["$defs"]:
            assert schemas.errors("urn:mcp-conformance:map-review:1", f"hook.{hook}.params", params) == []
        assert (
            schemas.errors("urn:mcp-conformance:map-review:1", f"hook.{hook}.result", answer["result"]) == []
        )


# --------------------------------------------------------------------------- SKIP `needs:`

#: Checks that need no hook: they PASS against the reference with no controller at all.
NO_HOOK = {
    "map-review.profile.shown",
    "map-review.tools.listed",
    "map-review.tools.read-input-schema",
    "map-review.tools.read-output-schema",
    "map-review.tools.decide-input-schema",
    "map-review.tools.schemas-meta-valid",
    "map-review.read.unknown-reference",
}


@pytest.mark.slow
def test_no_controller_means_skip_naming_the_hook(tmp_path: Path) -> None:
    report = run([target(tmp_path / "s.db", controller=False)])
    verdicts = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    assert {k for k, (v, _) in verdicts.items() if v == "PASS"} == NO_HOOK
    skipped = {k: m for k, (v, m) in verdicts.items() if v == "SKIP"}
    assert set(skipped) == {c.id for c in checks()} - NO_HOOK
    for check_id, message in skipped.items():
        assert message.startswith("needs: "), (check_id, message)
    assert skipped["map-review.golden.p7-exchange"].startswith("needs: reset, set_clock")
    assert skipped["map-review.decide.stale-revision"].startswith("needs: create_review, mutate_terms")
    assert skipped["map-review.read.open-review"].startswith("needs: create_review")
    assert skipped["map-review.read.rejects-bad-input"].startswith(
        "needs: create_review (or a [map] reference)"
    )


@pytest.mark.slow
def test_a_partial_controller_gets_skip_naming_the_missing_hooks(tmp_path: Path) -> None:
    offered = ["create_review", "publication_jobs"]
    selected = checks(
        only=(
            "map-review.decide.approve",
            "map-review.decide.stale-revision",
            "map-review.decide.withdrawn",
            "map-review.decide.expired",
            "map-review.decide.recipient-only",
            "map-review.race.decide-vs-mutate",
            "map-review.race.expiry-boundary",
            "map-review.golden.p7-exchange",
            "map-review.digest.snapshot-frozen",
        )
    )
    report = run([target(tmp_path / "s.db", hooks=offered)], selected)
    verdicts = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    assert verdicts == {
        "map-review.decide.approve": ("PASS", ""),
        "map-review.decide.stale-revision": ("SKIP", "needs: mutate_terms"),
        "map-review.decide.withdrawn": ("SKIP", "needs: withdraw"),
        "map-review.decide.expired": ("SKIP", "needs: expire or set_clock"),
        "map-review.decide.recipient-only": ("SKIP", "needs: second_account"),
        "map-review.race.decide-vs-mutate": ("SKIP", "needs: mutate_terms"),
        "map-review.race.expiry-boundary": ("SKIP", "needs: set_clock"),
        "map-review.golden.p7-exchange": ("SKIP", "needs: reset, set_clock"),
        "map-review.digest.snapshot-frozen": ("SKIP", "needs: mutate_terms"),
    }


def test_a_controller_that_cannot_start_is_error_not_a_verdict(tmp_path: Path) -> None:
    broken = target(tmp_path / "s.db", controller=False)
    from dataclasses import replace

    broken = replace(broken, settings={"controller": {"command": ["/nonexistent/controller"]}})
    report = run([broken], checks(only=("map-review.decide.approve", "map-review.tools.listed")))
    verdicts = {c["check"]: c["verdict"] for c in report["cases"]}
    assert verdicts == {"map-review.decide.approve": "ERROR", "map-review.tools.listed": "PASS"}
