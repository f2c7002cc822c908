"""scripts/check-imports.py (run by the lint env) refuses an import cycle and a plugin that
reaches past the core's public API or into another plugin."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rules() -> ModuleType:
    pytest.importorskip("grimp", reason="grimp comes with import-linter (the lint env)")
    spec = importlib.util.spec_from_file_location(
        "check_imports", ROOT / "scripts/check-imports.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_tree_as_it_is_keeps_every_rule(rules: ModuleType) -> None:
    assert rules.cycles() == []
    assert rules.plugin_breaches() == []


def test_a_cycle_is_named(rules: ModuleType, tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "cyclepkg_t/__init__.py": "",
            "cyclepkg_t/a.py": "from cyclepkg_t import b\n",
            "cyclepkg_t/b.py": "from cyclepkg_t.a import x\n",
            "cyclepkg_t/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from cyclepkg_t import a\n",
        },
    )
    assert rules.cycles("cyclepkg_t", tmp_path) == [["cyclepkg_t.a", "cyclepkg_t.b"]]


@pytest.mark.parametrize(
    ("line", "breach"),
    [
        ("from kubesched.engine.runtime import Framework", "kubesched.engine.runtime"),
        ("import kubesched.service.run", "kubesched.service.run"),
        ("from kubesched.framework._private import x", "kubesched.framework._private"),
        ("from kubesched import _version", "kubesched._version"),
        ("from kubesched.testing.builders import make_pod", "kubesched.testing.builders"),
        ("from kubesched_other import thing", "another plugin"),
    ],
    ids=["runtime", "service", "private-module", "private-name", "testing", "other-plugin"],
)
def test_a_plugin_past_the_public_api_is_refused(
    rules: ModuleType, tmp_path: Path, line: str, breach: str
) -> None:
    _write(tmp_path, {"plugins/mine/kubesched_mine/__init__.py": f"{line}\n"})
    (found,) = rules.plugin_breaches(tmp_path)
    assert found.startswith("plugins/mine/kubesched_mine/__init__.py:1: ")
    assert breach in found


def test_the_public_api_is_allowed(rules: ModuleType, tmp_path: Path) -> None:
    source = """\
        from kubesched import Status, hookimpl
        from kubesched.api.selectors import LabelSelector
        from kubesched.framework.helpers import MAX_NODE_SCORE
        from kubesched.errors import ArgsError
        from kubesched_mine import other_module
    """
    _write(tmp_path, {"plugins/mine/kubesched_mine/__init__.py": source})
    assert rules.plugin_breaches(tmp_path) == []
