"""``kubesched new-plugin NAME``: write a complete, tested plugin package to start from.

The package holds a pyproject with the ``kubesched.plugins`` entry point, one module with the
chosen hooks (an example logic driven by a node label, typed ``<Name>Args`` validated at start-up,
the events to register when the plugin rejects pods), tests that use kubesched's pytest fixtures,
a README with a profile that enables the plugin, and a tox.ini. Right after ``pip install -e``,
its tests pass, ``kubesched plugins`` lists it and a profile can enable it.

The files come from the templates in ``kubesched/templates/plugin``: one snippet per extension
point (``hooks/<point>.tmpl``) with sections for the module, the class, the events, the README
and the tests; this module assembles the snippets the user chose.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, TextIO

from kubesched._version import __version__
from kubesched.errors import KubeschedError

__all__ = [
    "DEFAULT_POINTS",
    "POINTS",
    "PluginNames",
    "cmd_new_plugin",
    "parse_points",
    "register_commands",
    "render_plugin",
    "write_plugin",
]

#: The points ``--points`` accepts, in the order they run, and their template (snippet) names.
POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "normalizeScore": "normalize_score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}
DEFAULT_POINTS = ("filter", "score")
_TITLES = {p: p[0].upper() + p[1:] for p in POINTS}
_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_SECTION = re.compile(r"^# --- (\w+)$", re.MULTILINE)


def parse_points(text: str) -> list[str]:
    """``"filter,score"`` (any case, ``-``/``_`` ignored) as profile point names in run order.

    ``normalizeScore`` brings ``score`` with it. Raises :class:`KubeschedError` naming every
    unknown point and the accepted ones.
    """
    by_key = {p.lower(): p for p in POINTS}
    chosen: set[str] = set()
    unknown: list[str] = []
    for word in filter(None, (w.strip() for w in text.split(","))):
        point = by_key.get(word.replace("-", "").replace("_", "").lower())
        if point is None:
            unknown.append(word)
        else:
            chosen.add(point)
    if unknown or not chosen:
        what = f"unknown extension point(s): {', '.join(unknown)}" if unknown else "no points"
        raise KubeschedError(f"--points: {what}; choose from {', '.join(POINTS)}")
    if "normalizeScore" in chosen:
        chosen.add("score")
    return [p for p in POINTS if p in chosen]


@dataclass(frozen=True)
class PluginNames:
    """Every name derived from the plugin's profile name (``GpuTemperature``)."""

    name: str
    snake: str
    kebab: str

    @classmethod
    def of(cls, name: str) -> PluginNames:
        if not _NAME.match(name) or len(name) > 40:
            raise KubeschedError(
                f"plugin name {name!r}: use the name a profile will write, in UpperCamelCase "
                "letters and digits, at most 40 (e.g. GpuTemperature)"
            )
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
        return cls(name, snake, snake.replace("_", "-"))

    @property
    def distribution(self) -> str:
        return f"kubesched-{self.kebab}"

    @property
    def package(self) -> str:
        return f"kubesched_{self.snake}"


@dataclass
class _Snippet:
    sections: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str:
        return self.sections.get(name, "")

    def words(self, name: str) -> list[str]:
        return self.get(name).split()


def _template(*parts: str) -> str:
    return (resources.files("kubesched") / "templates" / "plugin").joinpath(*parts).read_text()


def _snippet(name: str) -> _Snippet:
    text = _template("hooks", f"{name}.tmpl")
    pieces = _SECTION.split(text)
    return _Snippet({pieces[i]: pieces[i + 1] for i in range(1, len(pieces), 2)})


def _order(names: set[str]) -> list[str]:
    """isort's order for ``from x import (...)`` and ``__all__``: CONSTANTS, Classes, rest."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


def _used(candidates: set[str], text: str) -> set[str]:
    return {name for name in candidates if re.search(rf"\b{re.escape(name)}\b", text)}


def _import(module: str, names: list[str]) -> str:
    """``from module import a, b`` as ruff formats it: one line when it fits in 100 columns."""
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 100:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"


def _dunder_all(names: list[str]) -> str:
    line = "__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]"
    if len(line) <= 100:
        return line
    return "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]"


def _joined(snippets: list[_Snippet], section: str, separator: str, lead: str = "") -> str:
    """The non-empty ``section`` of each snippet, trimmed of blank lines, joined."""
    parts = [s.get(section).strip("\n") for s in snippets]
    return (
        "".join(lead + part for part in parts if part)
        if lead
        else separator.join(part for part in parts if part)
    )


def _profile_points(names: PluginNames, points: list[str]) -> str:
    lines: list[str] = []
    for point in points:
        if point == "normalizeScore":
            continue
        lines += [f"      {point}:", "        enabled:", f"          - name: {names.name}"]
        if point == "score":
            lines.append("            weight: 1")
        if point == "bind":
            lines.append("          - name: DefaultBinder")
        if point in ("queueSort", "bind"):
            lines += ["        disabled:", '          - name: "*"']
    return "\n".join(lines) + "\n"


def _module(
    names: PluginNames,
    points: list[str],
    chosen: list[_Snippet],
    helpers: list[_Snippet],
    values: dict[str, Any],
) -> tuple[str, set[str]]:
    """The plugin module's text and the names it exports."""
    snippets = chosen + helpers
    methods = [s.get("class").strip("\n") for s in chosen]
    events = _joined(snippets, "events", "\n")
    if events:
        methods.append(
            "    @hookimpl\n"
            "    def events_to_register(self) -> list[ClusterEventWithHint]:\n"
            '        """The cluster events that can make a pod this plugin rejected schedulable'
            ' again."""\n'
            f"        return [\n{events}\n        ]"
        )
    methods += [s.get("class").strip("\n") for s in helpers]
    module_parts = _joined(snippets, "module", "", lead="\n\n\n")
    text = Template(_template("module.py.tmpl")).safe_substitute(
        values,
        module_parts=module_parts,
        init_parts=_joined(snippets, "init", "", lead="\n"),
        class_parts="".join(f"\n\n{m}" for m in methods if m),
    )
    imports = {"ArgsError", "FieldError", "Handle", "hookimpl"}
    imports |= {w for s in snippets for w in s.words("imports")}
    exported = {"NAME", "DEFAULT_LABEL", names.name, f"{names.name}Args"}
    exported |= set(re.findall(r"^(?:def |class )?([A-Za-z]\w*)", module_parts, re.MULTILINE))
    importing = "".join(f"    {n},\n" for n in _order(_used(imports, text)))
    text = Template(text).safe_substitute(
        imports=importing.rstrip("\n"),
        all=_dunder_all(_order(exported)),
    )
    return text, exported


def render_plugin(name: str, points: list[str]) -> dict[str, str]:
    """The package's files: relative path -> content."""
    names = PluginNames.of(name)
    chosen = [_snippet(POINTS[p]) for p in points]
    helpers = [_snippet(h) for h in dict.fromkeys(w for s in chosen for w in s.words("needs"))]
    titles = ", ".join(_TITLES[p] for p in points)
    major, minor = (int(x) for x in __version__.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    values: dict[str, Any] = {
        "name": names.name,
        "package": names.package,
        "dist": names.distribution,
        "default_label": f"example.com/{names.kebab}",
        "points_doc": titles,
        "points_md": ", ".join(f"**{_TITLES[p]}**" for p in points),
        "summary": "An example plugin driven by a label; replace its logic with your own.",
        "module_doc": textwrap.fill(
            f"Generated by ``kubesched new-plugin`` for {titles}. The example logic reads the "
            f"label named by the ``label`` arg (default ``example.com/{names.kebab}``); replace "
            "it with your own, keeping the tests in step.",
            width=100,
        ),
        "core_requirement": f"kubesched>={major}.{minor},<{upper}",
        "high_weighted": 200 if "normalizeScore" in points else 180,
    }
    module, exported = _module(names, points, chosen, helpers, values)

    tests = Template(_joined(chosen + helpers, "tests", "", lead="\n\n\n")).safe_substitute(values)
    test_text = Template(_template("test_module.py.tmpl")).safe_substitute(values, tests=tests)
    body = test_text.split("\n\n\n", 1)[1]  # what follows the imports
    kubesched_names = {"ArgsError"} | {w for s in chosen + helpers for w in s.words("test_imports")}
    package_names = exported | {w for s in chosen for w in s.words("test_package_imports")}
    test_text = Template(test_text).safe_substitute(
        kubesched_imports=_import("kubesched", _order(_used(kubesched_names, body))),
        package_imports=_import(names.package, _order(_used(package_names, body))),
    )
    events_doc = _joined(chosen + helpers, "events_doc", "\n\n") or (
        "It rejects no pods, so it registers no events."
    )
    readme = Template(_template("README.md.tmpl")).safe_substitute(
        values,
        decisions=_joined(chosen, "doc", "\n"),
        events=events_doc,
        profile_points=_profile_points(names, points),
    )
    return {
        "pyproject.toml": Template(_template("pyproject.toml.tmpl")).safe_substitute(values),
        "README.md": readme,
        "tox.ini": Template(_template("tox.ini.tmpl")).safe_substitute(values),
        ".gitignore": _template("gitignore.tmpl"),
        f"{names.package}/__init__.py": module,
        f"{names.package}/py.typed": "",
        f"tests/test_{names.snake}.py": test_text,
    }


def write_plugin(name: str, points: list[str], directory: str | Path | None = None) -> Path:
    """Write the package into ``directory`` (default ``./kubesched-<name>``); returns it.

    Refuses a directory that exists and is not empty, so nothing is overwritten.
    """
    files = render_plugin(name, points)
    target = Path(directory) if directory else Path(PluginNames.of(name).distribution)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise KubeschedError(f"{target}: already exists and is not empty; choose another --dir")
    for relative, content in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return target


def register_commands(commands: Any) -> None:
    """Add ``new-plugin`` to the ``kubesched`` sub-commands (``commands`` from add_subparsers)."""
    parser = commands.add_parser("new-plugin", help="write a new plugin package, ready to test")
    parser.add_argument("name", metavar="NAME", help="the plugin's profile name, e.g. GpuTemp")
    parser.add_argument(
        "--points",
        default=",".join(DEFAULT_POINTS),
        help=f"extension points to implement, comma-separated (default: "
        f"{','.join(DEFAULT_POINTS)}; any of {', '.join(POINTS)})",
    )
    parser.add_argument(
        "--dir", dest="directory", help="where to write it (default: ./kubesched-<name>)"
    )
    parser.set_defaults(func=cmd_new_plugin)


def cmd_new_plugin(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    points = parse_points(args.points)
    names = PluginNames.of(args.name)
    target = write_plugin(args.name, points, args.directory)
    print(f"wrote plugin {names.name} ({names.distribution}) to {target}", file=out)
    print(f"next: pip install -e {target} && pytest {target}", file=out)
    return 0
