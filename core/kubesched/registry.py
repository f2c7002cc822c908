"""Where plugins come from: the ``kubesched.plugins`` entry-point group, or explicit registration.

Listing installed plugins reads distribution metadata only; a plugin's module is imported when a
profile names it (or when ``kubesched plugins`` is asked for its extension points). The entry
point's name is the plugin's profile name and must point at the plugin class.

The plugin contract: ``PluginClass(args: Mapping[str, Any], handle: Handle)`` builds the plugin for
one profile (raising :class:`~kubesched.ArgsError` with every bad field), and its extension points
are its methods decorated with ``@kubesched.hookimpl``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import PluginLoadError
from .hookspecs import COMPANION_HOOKS, EXTENSION_POINTS, PROJECT

__all__ = ["ENTRY_POINT_GROUP", "PluginSpec", "Registry", "extension_points_of"]

ENTRY_POINT_GROUP = "kubesched.plugins"
_HOOK_TO_POINT = {hook: point for point, hook in EXTENSION_POINTS.items()}
_IMPL_MARK = f"{PROJECT}_impl"


def extension_points_of(plugin: Any) -> list[str]:
    """The profile extension points (``filter``, ``score``, …) a plugin class implements."""
    points = []
    for point, hook in EXTENSION_POINTS.items():
        member = getattr(plugin, hook, None)
        if member is not None and hasattr(member, _IMPL_MARK):
            points.append(point)
    return points


def implemented_hooks(plugin: Any) -> list[str]:
    """Every hook (including companions such as ``normalize_score``) the plugin implements."""
    hooks = [*EXTENSION_POINTS.values(), *COMPANION_HOOKS]
    return [h for h in hooks if hasattr(getattr(plugin, h, None), _IMPL_MARK)]


@dataclass
class PluginSpec:
    """One installed (or explicitly registered) plugin, loaded on first use."""

    name: str
    distribution: str = ""
    version: str = ""
    target: str = ""
    _entry_point: importlib.metadata.EntryPoint | None = field(default=None, repr=False)
    _cls: type | None = field(default=None, repr=False)

    def load(self) -> type:
        """Import the plugin class; :class:`PluginLoadError` in one line when that fails."""
        if self._cls is not None:
            return self._cls
        assert self._entry_point is not None  # a spec has a class or an entry point
        try:
            loaded = self._entry_point.load()
        except Exception as exc:  # any import-time failure is the plugin's, not ours
            raise PluginLoadError(
                f'plugin "{self.name}" from {self.distribution or "?"} {self.version} '
                f"({self.target}) failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(loaded, type) or not extension_points_of(loaded):
            raise PluginLoadError(
                f'plugin "{self.name}" from {self.distribution} {self.version}: entry point '
                f"{self.target} must name a plugin class with @kubesched.hookimpl methods"
            )
        self._cls = loaded
        return loaded

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
            registry._specs.setdefault(
                ep.name,
                PluginSpec(
                    name=ep.name,
                    distribution=dist.name if dist else "",
                    version=dist.version if dist else "",
                    target=ep.value,
                    _entry_point=ep,
                ),
            )
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
