"""No secret, in any form, and no raw bidi or control character reaches any output of the harness.

The server is tests/servers/echo_secret_server.py, over stdio and over HTTP, run by the harness as a
real subprocess from a target file (`[target.env_from]`, `[target.headers_from_env]`) with the secret
in the environment. Every file the run, `certify`, `compare` and `diff` write, and everything the
harness prints, is searched for the secret in every encoding the server used and more. The harness runs
as a real subprocess under the peak-RSS wrapper of tests/hostile.py: each run's exit code, its
report.json read back by the typed model, its peak RSS and the server processes left (by the test's
tag) are checked too.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conformance.reporting import model
from conformance.text import Masker, visible
from tests.hostile import PEAK_LIMIT_MB, harness, left_after
from tests.servers.echo_secret_server import BIDI_RAW, ESCAPED_FORMS, text_forms

REVISION = "2025-11-25"
#: A secret with a slash and a plus (escaped and encoded forms of its own) and letters in both cases.
CANARY = "canary/7f3a+9c-DO-NOT-LEAK"
SERVER = [sys.executable, "-m", "tests.servers.echo_secret_server"]


def leaked_forms(secret: str) -> dict[str, str]:
    """Every string whose presence in an output shows the secret: the forms the server echoed, and for
    base64 the run of characters fixed by the secret alone at each alignment (found inside any longer
    base64 string, padded or not, standard or URL-safe)."""
    forms = {
        name: form for name, form in text_forms(secret).items() if not name.startswith(("base64", "basic"))
    }
    forms.update({name.strip("@"): form(secret) for name, form in ESCAPED_FORMS.items()})
    data = secret.encode()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + data + b"\0\0").decode()
        run = encoded[-(-8 * lead // 6) : 8 * (lead + len(data)) // 6]
        forms[f"base64-run-{lead}"] = run
        forms[f"base64url-run-{lead}"] = run.replace("+", "-").replace("/", "_")
    return forms


def _harness(args: list[str], env: dict[str, str], outputs: list[str]) -> subprocess.CompletedProcess[str]:
    result, peak_mb = harness(*args, environ=env, timeout=180)
    over = f" {Path(args[args.index('--server') + 1]).stem}" if "--server" in args else ""
    print(f"{args[0]}{over}: peak RSS {peak_mb:.0f} MB")  # shown with -s
    assert peak_mb < PEAK_LIMIT_MB, f"{args[0]}: the harness peaked at {peak_mb:.0f} MB"
    outputs += [result.stdout, result.stderr]
    return result


def _run_both(tmp_path: Path, extra: list[str], env: dict[str, str], outputs: list[str]) -> list[Path]:
    """Run the echo server over stdio and HTTP from target files; the report folders."""
    tag = f"echo-{uuid.uuid4().hex}"
    extra = [*extra, "--tag", tag]
    stdio_target = tmp_path / "stdio.toml"
    stdio_target.write_text(
        f'[target]\ncommand = {json.dumps([*SERVER, *extra])}\n[target.env_from]\nCANARY = "CANARY_SOURCE"\n',
        encoding="utf-8",
    )
    http_target = tmp_path / "http.toml"
    http_target.write_text(
        f"[target]\ncommand = {json.dumps([*SERVER, '--http', *extra])}\n"
        'transport = "http"\n'
        '[target.headers_from_env]\nAuthorization = "AUTH_SOURCE"\n',
        encoding="utf-8",
    )
    folders = []
    for target in (stdio_target, http_target):
        folder = tmp_path / target.stem
        try:
            result = _harness(
                ["run", "--server", str(target), "--protocol", REVISION, "--timeout", "5",
                 "--report-dir", str(folder)],
                env,
                outputs,
            )  # fmt: skip
        finally:
            left = left_after(tag)
        assert not left, f"{target.stem}: server processes left behind: {left}"
        assert result.returncode in (0, 1), result.stderr
        report = model.load(folder)
        assert report.footer.complete is True and report.footer.exit_code == result.returncode
        assert {"report.json", "report.md", "junit.xml", "report.html", "report.sarif"} <= {
            p.name for p in folder.iterdir()
        }
        folders.append(folder)
    first, second = folders
    for args in (
        ["certify", "--report", str(first), "--out", str(tmp_path / "bundle")],
        ["compare", str(first), str(second), "--out", str(tmp_path / "compare")],
        ["diff", str(first), str(second)],
        ["diff", "--json", str(first), str(second)],
    ):
        result = _harness(args, env, outputs)
        assert result.returncode in (0, 1), (args, result.stderr)
    return folders


def _written(tmp_path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tmp_path)): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(tmp_path.rglob("*"))
        if p.is_file() and p.suffix != ".toml"
    }


def test_secret_in_no_form_reaches_any_output(tmp_path: Path) -> None:
    env = {**os.environ, "CANARY_SOURCE": CANARY, "AUTH_SOURCE": f"Bearer {CANARY}"}
    outputs: list[str] = []
    folders = _run_both(tmp_path, [], env, outputs)
    texts = {**_written(tmp_path), **{f"output {i}": text for i, text in enumerate(outputs)}}
    assert any("bundle" in name for name in texts) and any("compare" in name for name in texts)
    forms = leaked_forms(CANARY)
    leaks = [(name, form) for name, text in texts.items() for form, value in forms.items() if value in text]
    assert leaks == []
    for folder in folders:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        dumped = json.dumps(report)
        assert "[redacted]" in dumped, "the echoed secret was seen and masked, not absent"
        cases = report["cases"]
        assert any("[redacted]" in json.dumps(case["evidence"]) for case in cases), "an error echoed it"
        entries = [entry for case in cases for entry in case["transcript"]]
        if folder.name == "http":
            assert any("[redacted]" in entry.get("channel", "") for entry in entries), "the reason phrase"
            assert any(
                entry.get("headers", {}).get("x-echo") == "[redacted]"
                or entry.get("headers", {}).get("X-Echo") == "[redacted]"
                for entry in entries
            ), "the echoing response header"


def test_bidi_and_control_characters_are_shown_escaped_everywhere(tmp_path: Path) -> None:
    env = {**os.environ, "CANARY_SOURCE": CANARY, "AUTH_SOURCE": f"Bearer {CANARY}"}
    outputs: list[str] = []
    _run_both(tmp_path, ["--bidi"], env, outputs)
    texts = {**_written(tmp_path), **{f"output {i}": text for i, text in enumerate(outputs)}}
    # The canonical report (and the bundle's copy) keep the server's text exactly: data, not a view.
    views = {name: text for name, text in texts.items() if not name.endswith(".json")}
    raw = [(name, hex(ord(char))) for name, text in views.items() for char in BIDI_RAW if char in text]
    assert raw == []
    for name in ("stdio/report.md", "stdio/junit.xml", "stdio/report.html", "stdio/report.sarif"):
        assert "\\u202e" in views[name], f"{name} shows the override, escaped"
    assert any("\\u202e" in text for name, text in views.items() if name.startswith("output"))


@pytest.mark.parametrize(
    "form",
    [
        "canary/7f3a+9c-DO-NOT-LEAK",
        "\\u0063\\u0061\\u006E\\u0061\\u0072\\u0079\\u002F\\u0037\\u0066\\u0033\\u0061\\u002b\\u0039\\u0063"
        "\\u002d\\u0044\\u004f\\u002D\\u004E\\u004F\\u0054\\u002D\\u004C\\u0045\\u0041\\u004B",
        "canary\\/7f3a+9c-DO-NOT-LEAK",
        "c\\u0061nary\\/7f3a+9c-D\\u004f-NOT-LEAK",
        "canary%2F7f3a%2B9c-DO-NOT-LEAK",
        "canary%2f7f3a%2b9c-DO-NOT-LEAK",
        "&#x63;anary/7f3a+9c-DO-NOT-LEAK",
        base64.b64encode(b"user:canary/7f3a+9c-DO-NOT-LEAK").decode(),
        base64.urlsafe_b64encode(b"xcanary/7f3a+9c-DO-NOT-LEAKyz").decode().rstrip("="),
        json.dumps(base64.b64encode(b"xxcanary/7f3a+9c-DO-NOT-LEAK").decode()).replace("/", "\\/"),
    ],
)
def test_masker_finds_each_form_inside_other_text(form: str) -> None:
    masker = Masker([CANARY])
    masked = masker.text(f'{{"a": "before {form} after"}}')
    assert masked.startswith('{"a": "before ') and masked.endswith(' after"}')
    assert "[redacted]" in masked
    assert not any(value in masked for value in leaked_forms(CANARY).values())


def test_short_secrets_are_not_masked_and_bytes_stay_bytes() -> None:
    masker = Masker(["abc", CANARY])
    assert masker.short == 1 and masker.text("abc") == "abc"
    assert masker.data(b"\xff" + CANARY.encode() + b"\xfe") == b"\xff[redacted]\xfe"
    assert masker.value({"k": [CANARY, 1, None, b"x" + CANARY.encode()]}) == {
        "k": ["[redacted]", 1, None, b"x[redacted]"]
    }


def test_visible_escapes_bidi_controls_and_keeps_text() -> None:
    assert visible("a\u202eb\u2066c\u200dd\x1b[2Je\x85") == "a\\u202eb\\u2066c\\u200dd\\x1b[2Je\\x85"
    assert visible("line\nnext\ttab café 日本", lines=True) == "line\nnext\ttab café 日本"
    assert visible("line\nnext") == "line\\x0anext"
