"""Where plugins come from: the ``kubesched.plugins`` entry-point group, or explicit registration.

Listing installed plugins reads distribution metadata only; a plugin's module is imported when a
profile names it (or when ``kubesched plugins`` is asked for its extension points). The entry
point's name is the plugin's profile name and must point at the plugin class.

The plugin contract: ``PluginClass(args: Mapping[str, Any], handle: Handle)`` builds the plugin for
one profile (raising :class:`~kubesched.ArgsError` with every bad field), and its extension points
are its methods decorated with ``@kubesched.hookimpl``.
"""

from __future__ import annotations

import difflib
import importlib.metadata
import inspect
import types
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pluggy

from kubesched.errors import PluginLoadError
from kubesched.framework import hookspecs
from kubesched.framework.hookspecs import EXTENSION_POINTS, PROJECT

__all__ = [
    "ENTRY_POINT_GROUP",
    "HookManager",
    "PluginSpec",
    "Registry",
    "check_hook_names",
    "extension_points_of",
]

ENTRY_POINT_GROUP = "kubesched.plugins"
_HOOK_TO_POINT = {hook: point for point, hook in EXTENSION_POINTS.items()}
_IMPL_MARK = f"{PROJECT}_impl"
#: Every hook a plugin may implement: the functions of ``hookspecs`` marked ``@hookspec``.
HOOK_NAMES = frozenset(
    name
    for name, member in inspect.getmembers(hookspecs, inspect.isfunction)
    if hasattr(member, f"{PROJECT}_spec")
)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _hook_name_errors(plugin: Any) -> list[str]:
    """One message per ``@hookimpl`` method that implements no hook, with the nearest hook."""
    problems = []
    for attr in sorted(dir(plugin)):
        member = getattr(plugin, attr, None)
        opts = getattr(member, _IMPL_MARK, None)
        if not isinstance(opts, dict):
            continue
        specname = opts.get("specname")
        if specname and specname != attr:
            # The framework finds a plugin's hooks by method name (extension_points_of).
            problems.append(
                f'@kubesched.hookimpl method "{attr}" sets specname="{specname}"; '
                f'name the method "{specname}" instead'
            )
        elif attr not in HOOK_NAMES:
            close = difflib.get_close_matches(attr, sorted(HOOK_NAMES), n=1, cutoff=0.6)
            hint = (
                f'; did you mean "{close[0]}"?'
                if close
                else f"; the hooks are: {', '.join(sorted(HOOK_NAMES))}"
            )
            problems.append(f'@kubesched.hookimpl method "{attr}" is not a kubesched hook{hint}')
    if _implements(plugin, "score_nodes") and not _implements(plugin, "score"):
        # Without its score the plugin is at no Score point, and score_nodes would never run.
        problems.append(
            '@kubesched.hookimpl method "score_nodes" has no "score" beside it: score_nodes is '
            "only the whole-column form of a plugin's Score"
        )
    return problems


def _implements(plugin: Any, hook: str) -> bool:
    return hasattr(getattr(plugin, hook, None), _IMPL_MARK)


def check_hook_names(plugin: Any, name: str, origin: str = "") -> None:
    """:class:`PluginLoadError` naming plugin ``name`` when a ``@hookimpl`` method of ``plugin``
    is not a hook (a misspelt ``def filters``): pluggy would register it silently and the
    framework would never call it. ``origin``: where the plugin comes from, for the message."""
    problems = _hook_name_errors(plugin)
    if problems:
        where = f" from {origin}" if origin else ""
        raise PluginLoadError(f'plugin "{name}"{where}: {"; ".join(problems)}')


def extension_points_of(plugin: Any) -> list[str]:
    """The profile extension points (``filter``, ``score``, …) a plugin class implements."""
    points = []
    for point, hook in EXTENSION_POINTS.items():
        if _implements(plugin, hook):
            points.append(point)
    return points


_ABSENT = object()


def _class_attribute(cls: type, name: str) -> Any:
    """``name`` as the first class of ``cls``'s MRO defines it (``_ABSENT`` if none does)."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(name, _ABSENT)
        if value is not _ABSENT:
            return value
    return _ABSENT


def _own_attributes(plugin: Any) -> Any:
    """The instance's own ``__dict__``, read without running its ``__getattr__``."""
    try:
        own = object.__getattribute__(plugin, "__dict__")
    except AttributeError:
        return ()
    return own if isinstance(own, dict) else ()


class HookManager(pluggy.PluginManager):
    """pluggy's manager, parsing each plugin class's hook implementations once.

    ``register`` asks :meth:`parse_hookimpl_opts` about every name ``dir(plugin)`` lists, and
    pluggy answers each with ``inspect.getattr_static``: about 90 % of building a profile, paid
    again for every profile built (the parity suites build one per pod). For an attribute that
    comes from the plugin's class (not set on the instance, not a slot), the answer depends only
    on the class attribute, so it is kept per class, next to that attribute, and reused while
    the class still holds the same object (a method replaced on the class is parsed anew).
    """

    #: class -> attribute name -> (the class attribute parsed, pluggy's answer for it).
    _parsed: weakref.WeakKeyDictionary[type, dict[str, tuple[Any, Any]]] = (
        weakref.WeakKeyDictionary()
    )

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        cls = type(plugin)
        if isinstance(plugin, (type, types.ModuleType)) or name in _own_attributes(plugin):
            return super().parse_hookimpl_opts(plugin, name)
        static = _class_attribute(cls, name)
        try:
            parsed = self._parsed.setdefault(cls, {})
        except TypeError:  # a class that cannot be weakly referenced
            return super().parse_hookimpl_opts(plugin, name)
        entry = parsed.get(name)
        if entry is not None and entry[0] is static:
            return entry[1]
        opts = super().parse_hookimpl_opts(plugin, name)
        if not isinstance(static, types.MemberDescriptorType):  # a slot's value is per instance
            parsed[name] = (static, opts)
        return opts


@dataclass
class PluginSpec:
    """One installed (or explicitly registered) plugin, loaded on first use."""

    name: str
    distribution: str = ""
    version: str = ""
    target: str = ""
    _entry_point: importlib.metadata.EntryPoint | None = field(default=None, repr=False)
    _cls: type | None = field(default=None, repr=False)
    _checked: bool = field(default=False, repr=False)
    #: The other installed distributions with an entry point of this name (an error to load).
    _also_registered_by: list[str] = field(default_factory=list, repr=False)

    def load(self) -> type:
        """Import the plugin class; :class:`PluginLoadError` in one line when that fails."""
        if self._cls is not None:
            if not self._checked:
                check_hook_names(self._cls, self.name, self.target)
                self._checked = True
            return self._cls
        assert self._entry_point is not None  # a spec has a class or an entry point
        if self._also_registered_by:
            origins = sorted([self.origin, *self._also_registered_by])
            raise PluginLoadError(
                f'plugin "{self.name}" is registered by {len(origins)} distributions: '
                f"{', '.join(origins)}; uninstall all but one of them"
            )
        try:
            loaded = self._entry_point.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # any import-time failure is the plugin's, sys.exit too
            raise PluginLoadError(
                f'plugin "{self.name}" from {self.origin} failed to import: {_describe(exc)}'
            ) from exc
        if isinstance(loaded, type):
            check_hook_names(loaded, self.name, self.origin)
        if not isinstance(loaded, type) or not extension_points_of(loaded):
            raise PluginLoadError(
                f'plugin "{self.name}" from {self.distribution} {self.version}: entry point '
                f"{self.target} must name a plugin class with @kubesched.hookimpl methods"
            )
        self._cls = loaded
        self._checked = True
        return loaded

    @property
    def origin(self) -> str:
        """``distribution version (module:Class)``, as messages name where a plugin comes from."""
        return f"{self.distribution or '?'} {self.version} ({self.target})"

    def extension_points(self) -> list[str]:
        return extension_points_of(self.load())


class Registry:
    """The plugins a scheduler may use, by profile name.

    ``Registry.installed()`` reads the entry points; ``Registry({"Name": Class})`` (or
    :meth:`register`) is for tests and embedding, independent of what is installed.
    """

    def __init__(self, plugins: Mapping[str, type] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for name, cls in (plugins or {}).items():
            self.register(name, cls)

    @classmethod
    def installed(cls) -> Registry:
        registry = cls()
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist
            spec = PluginSpec(
                name=ep.name,
                distribution=dist.name if dist else "",
                version=dist.version if dist else "",
                target=ep.value,
                _entry_point=ep,
            )
            first = registry._specs.setdefault(ep.name, spec)
            if first is not spec:
                # Which one would win depends on sys.path order: neither does.
                first._also_registered_by.append(spec.origin)
        return registry

    def register(self, name: str, cls: type, distribution: str = "", version: str = "") -> None:
        """Make ``cls`` available as plugin ``name`` (replacing an installed one of that name)."""
        module = getattr(cls, "__module__", "")
        self._specs[name] = PluginSpec(
            name=name,
            distribution=distribution,
            version=version,
            target=f"{module}:{cls.__qualname__}",
            _cls=cls,
        )

    def names(self) -> list[str]:
        return sorted(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def get(self, name: str) -> PluginSpec:
        return self._specs[name]

    def specs(self) -> Iterable[PluginSpec]:
        return [self._specs[name] for name in self.names()]
