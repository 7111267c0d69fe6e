"""One private home folder for hypothesis, shared by every user of the argument strategies."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

#: The private hypothesis home: its path, how many users hold it, the setting it replaced.
_HOME: dict[str, Any] = {"path": "", "users": 0, "previous": None}
_HOME_LOCK = threading.Lock()


@contextlib.contextmanager
def hypothesis_home() -> Iterator[None]:
    """hypothesis caches files (Unicode tables, constants) under `.hypothesis/` in the working folder;
    the harness writes only under its report folder, so point it at a private temporary folder (removed
    at exit) while any exploration or argument draw runs, and put the previous setting back when the
    last one ends."""
    from hypothesis import configuration

    with _HOME_LOCK:
        if not _HOME["users"]:
            if not _HOME["path"]:
                import atexit

                _HOME["path"] = tempfile.mkdtemp(prefix="mcp-conformance-hypothesis-")
                atexit.register(shutil.rmtree, _HOME["path"], ignore_errors=True)
            _HOME["previous"] = vars(configuration).get("__hypothesis_home_directory")
            configuration.set_hypothesis_home_dir(_HOME["path"])
        _HOME["users"] += 1
    try:
        yield
    finally:
        with _HOME_LOCK:
            _HOME["users"] -= 1
            if not _HOME["users"]:
                configuration.set_hypothesis_home_dir(_HOME["previous"])
