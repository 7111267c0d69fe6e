"""Headless Chromium driven over the Chrome DevTools Protocol, for testing the HTML report for real.

Why a real browser: escaping, the Content-Security-Policy, the inline script and the filters are only
proven where a browser parses and runs the page; an HTML parser in Python cannot tell whether a CSP
hash matches or a click toggles rows.

`find_chromium` looks for Debian's `chromium` and, when it is missing and we are root on a Debian-like
machine, installs it with apt-get (bounded); `Browser` starts it on loopback with a throwaway profile
and kills its whole process group on exit.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1280,1600",
)


def _which() -> str | None:
    explicit = os.environ.get("MCP_CONFORMANCE_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    return next((path for name in NAMES if (path := shutil.which(name))), None)


def find_chromium() -> tuple[str | None, str]:
    """The browser's path, or None and why not. Installs Debian's package when possible (bounded)."""
    found = _which()
    if found:
        return found, ""
    if os.environ.get("MCP_CONFORMANCE_NO_INSTALL"):
        return None, "chromium is not installed and MCP_CONFORMANCE_NO_INSTALL is set"
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "chromium is not installed, and apt-get as root is not available to install it"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    steps = (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"])
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600, env=env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"`{' '.join(step)}` failed: {exc}"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            return None, f"`{' '.join(step)}` exited {done.returncode}: {tail[0][:200]}"
    found = _which()
    return (found, "") if found else (None, "apt-get installed chromium, but no chromium binary was found")


class CdpError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page, spoken to over its DevTools websocket."""

    def __init__(self, binary: str, profile: Path, *, timeout: float = 30.0) -> None:
        self.binary, self.profile, self.timeout = binary, profile, timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.ws: Any = None
        self._stack = contextlib.ExitStack()
        self.events: list[dict[str, Any]] = []
        self._next_id = 0

    def __enter__(self) -> Browser:
        self.profile.mkdir(parents=True, exist_ok=True)
        # A profile used before holds its old port: wait for the one this browser writes.
        (self.profile / "DevToolsActivePort").unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: renderers and helpers die with it
        )
        try:
            self._connect()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> None:
        from websockets.sync.client import connect

        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc is not None and self.proc.poll() is not None:
                raise CdpError(f"chromium exited with status {self.proc.returncode} before listening")
            if time.monotonic() > deadline:
                raise CdpError("chromium did not open its DevTools port in time")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        url = None
        while url is None:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
                pages = [t for t in json.load(response) if t.get("type") == "page"]
            url = pages[0]["webSocketDebuggerUrl"] if pages else None
            if url is None:
                if time.monotonic() > deadline:
                    raise CdpError("chromium opened no page")
                time.sleep(0.05)
        self.ws = self._stack.enter_context(connect(url, max_size=None, open_timeout=self.timeout))

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.send("Browser.close", timeout=5)
            with contextlib.suppress(Exception):
                self._stack.close()
            self.ws = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)  # Browser.close lets it exit by itself
            # Whatever is left of its process group (the browser, renderers, helpers) is ended here.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None

    def send(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """One CDP command; events that arrive meanwhile are kept in `events`."""
        self._next_id += 1
        wanted = self._next_id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params or {}}))
        message = self._receive(lambda m: m.get("id") == wanted, f"answer to {method}", timeout)
        if "error" in message:
            raise CdpError(f"{method}: {message['error']}")
        return message.get("result", {})

    def wait_event(self, method: str, *, timeout: float | None = None) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        return self._receive(lambda m: m.get("method") == method, f"{method} event", timeout)

    def _receive(
        self, wanted: Callable[[dict[str, Any]], bool], what: str, timeout: float | None
    ) -> dict[str, Any]:
        """The next message `wanted` accepts, within the timeout; events met on the way are kept."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CdpError(f"no {what} in time")
            message: dict[str, Any] = json.loads(self.ws.recv(timeout=remaining))
            if wanted(message):
                return message
            if "method" in message:
                self.events.append(message)

    def open(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str, *, awaiting: bool = False) -> Any:
        """The value of `expression` in the page; `awaiting`: of the promise it gives, once it settles
        (bounded by the browser's timeout), so a test waits on the page's own events, never on a clock."""
        params = {"expression": expression, "returnByValue": True, "awaitPromise": awaiting}
        result = self.send("Runtime.evaluate", params)
        if "exceptionDetails" in result:
            raise CdpError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the element's centre, scrolled into view first.

        The point is taken once the layout has settled on it: two measurements in a row (each a round
        trip to the browser) put the same point inside the element, and nothing else lies on top of it
        there. A table that moves after a first measurement (a scrollbar appearing, a busy machine's
        late layout) would otherwise have its neighbouring cell clicked."""
        measure = (
            f"(() => {{ const el = document.querySelector({json.dumps(selector)});"
            ' el.scrollIntoView({block: "center", inline: "center", behavior: "instant"});'
            " const r = el.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2;"
            " const hit = document.elementFromPoint(x, y);"
            " return [x, y, !!hit && el.contains(hit)]; })()"
        )
        last: list[Any] | None = None
        for _ in range(50):
            point = self.evaluate(measure)
            if point[2] and point == last:
                break
            last = point
        else:
            raise CdpError(f"click {selector!r}: the element never settled under its own centre ({last})")
        x, y = point[0], point[1]
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
            )

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP refusals, failed loads)."""
        self.send("Runtime.evaluate", {"expression": "1"})  # flush events queued before this point
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(
                    "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif method == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                found.append(f"log ({entry.get('source')}): {entry.get('text')}")
        return found

    def viewport(self, width: int, height: int = 900) -> None:
        """Lay the page out `width` CSS pixels wide (a phone, a laptop), as a window that size would."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def screenshot(self, path: Path, *, full: bool = True) -> Path:
        """A PNG of the whole page, or (`full=False`) of what the window shows now."""
        params = {"format": "png", "captureBeyondViewport": full}
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
