"""The import rules import-linter cannot state, checked in the lint env.

1. No import cycle between the core's modules (imports under ``TYPE_CHECKING`` aside): a cycle
   is a layer boundary in the wrong place, or two modules that are one.
2. A plugin's package imports only the core's public API — ``kubesched``, ``kubesched.api``,
   ``kubesched.framework``, ``kubesched.errors``, no module whose name starts with ``_`` — and
   never another plugin or ``kubesched.testing`` (its tests may use the testing kit).

Exit 1 with one line per breach, naming the file and line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ("kubesched.api", "kubesched.framework", "kubesched.errors")


def cycles(package: str = "kubesched", path: Path = ROOT / "core") -> list[list[str]]:
    """``package``'s strongly connected module groups of more than one module (Tarjan)."""
    sys.path.insert(0, str(path))
    graph = grimp.build_graph(package, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def allowed(module: str) -> bool:
    if any(part.startswith("_") for part in module.split(".")):
        return False
    return module == "kubesched" or any(
        module == public or module.startswith(public + ".") for public in PUBLIC
    )


def plugin_breaches(root: Path = ROOT) -> list[str]:
    """Every import in a plugin package (``plugins/*/kubesched_*``, ``examples/*/…``) that is
    not of the core's public API or is of another plugin."""
    breaches = []
    for package in sorted(root.glob("*/*/kubesched_*/__init__.py")):
        own = package.parent.name
        for source in sorted(package.parent.rglob("*.py")):
            tree = ast.parse(source.read_text(), str(source))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                    if node.module == "kubesched":  # `from kubesched import _x` is private too
                        names += [f"kubesched.{a.name}" for a in node.names if a.name[0] == "_"]
                else:
                    continue
                where = f"{source.relative_to(root)}:{node.lineno}"
                for name in names:
                    top = name.split(".")[0]
                    if top.startswith("kubesched_") and top != own:
                        breaches.append(f"{where}: imports another plugin ({name})")
                    elif top == "kubesched" and not allowed(name):
                        breaches.append(
                            f"{where}: imports {name}, not the core's public API "
                            f"(kubesched, {', '.join(PUBLIC)})"
                        )
    return breaches


def main() -> int:
    problems = [f"import cycle: {' <-> '.join(group)}" for group in cycles()]
    problems += plugin_breaches()
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
