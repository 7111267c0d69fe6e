"""The bench scripts (`bench/`) run outside CI, on real servers and clients; what CI can hold is that
each names only what the modules it leans on define: the agreement bench read four helpers of the
real-server kit by names that kit no longer had (`kit._keys` and three more), and nothing noticed until
the bench was next run."""

from __future__ import annotations

import ast
import importlib
import sys

import pytest

from tests.conftest import REPO

BENCH = REPO / "bench"
#: bench script -> {the name it imports a kit module as: that module}
USES = {
    "agreement.py": {"kit": "real_kit.run"},
    "real_clients/run.py": {"kit": "real_kit.run"},
}


@pytest.mark.parametrize("script", sorted(USES))
def test_a_bench_script_uses_only_what_its_kit_defines(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])
    tree = ast.parse((BENCH / script).read_text(encoding="utf-8"))
    for alias, module_name in USES[script].items():
        module = importlib.import_module(module_name)
        used = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == alias
        }
        assert used, f"{script} uses nothing of {alias}"
        assert not [name for name in sorted(used) if not hasattr(module, name)], (script, module_name)
