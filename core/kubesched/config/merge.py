"""A profile's plugins: merged with the defaults, then multiPoint expanded, as kube-scheduler does.

``merge_plugin_set`` follows ``mergePluginSet``
(``pkg/scheduler/apis/config/v1/default_plugins.go``) and ``expand_multi_point`` follows the
framework's ``expandMultiPointPlugins`` (``pkg/scheduler/framework/runtime/framework.go``),
including their orderings.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.config.decode import PluginEntry, PluginSetSpec
from kubesched.config.defaults import MULTI_POINT
from kubesched.config.types import PluginRef
from kubesched.framework.hookspecs import EXTENSION_POINTS

__all__ = ["ALL_DISABLED", "MergedSet", "expand_multi_point", "merge_plugin_set", "merge_plugins"]

#: ``disabled: [{name: "*"}]``: no default plugin at that point (and no multiPoint expansion there).
ALL_DISABLED = "*"


@dataclass
class MergedSet:
    """One ``plugins`` field after the merge: its enabled plugins, and the names disabled there."""

    enabled: list[PluginEntry] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)


def merge_plugin_set(defaults: Sequence[PluginRef], custom: PluginSetSpec) -> MergedSet:
    """The defaults minus the disabled ones, a custom entry of a default's name replacing it in
    place (so its weight changes, not its position), then the other custom entries in order."""
    disabled = set(custom.disabled)
    # A later custom entry of the same name wins, as with kube-scheduler's map.
    custom_index = {entry.name: i for i, entry in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginEntry] = []
    if ALL_DISABLED not in disabled:
        for ref in defaults:
            if ref.name in disabled:
                continue
            index = custom_index.get(ref.name)
            if index is None:
                enabled.append(PluginEntry(ref.name, ref.weight))
            else:
                enabled.append(custom.enabled[index])
                replaced.add(index)
    enabled.extend(entry for i, entry in enumerate(custom.enabled) if i not in replaced)
    return MergedSet(enabled=enabled, disabled=disabled)


def merge_plugins(
    defaults: Mapping[str, Sequence[PluginRef]], custom: Mapping[str, PluginSetSpec]
) -> dict[str, MergedSet]:
    """``merge_plugin_set`` for ``multiPoint`` and every extension point."""
    return {
        key: merge_plugin_set(defaults.get(key, ()), custom.get(key, PluginSetSpec()))
        for key in (MULTI_POINT, *EXTENSION_POINTS)
    }


def expand_multi_point(
    merged: Mapping[str, MergedSet], points_of: Callable[[str], Collection[str]]
) -> dict[str, list[PluginRef]]:
    """Every extension point's plugins in run order, multiPoint plugins placed where they belong.

    At each point: plugins named both there and in multiPoint ("overrides", the specific entry's
    weight applies) in the point's order, then the multiPoint plugins that implement the point,
    then the point's other plugins. ``disabled: "*"`` at a point skips the expansion there, and a
    plugin disabled at a point is not expanded there. ``points_of(name)`` gives the points a
    plugin implements; the specific lists must hold only plugins that implement their point.
    """
    multi = merged[MULTI_POINT].enabled
    result: dict[str, list[PluginRef]] = {}
    for point in EXTENSION_POINTS:
        specific = _unique(merged[point].enabled)
        disabled = merged[point].disabled
        if ALL_DISABLED in disabled or not multi:
            result[point] = [_ref(point, entry) for entry in specific]
            continue
        specific_names = {entry.name for entry in specific}
        overrides: set[str] = set()
        expanded: list[PluginEntry] = []
        for entry in multi:
            if point not in points_of(entry.name) or entry.name in disabled:
                continue
            if entry.name in specific_names:
                overrides.add(entry.name)
            elif all(e.name != entry.name for e in expanded):
                expanded.append(entry)
        ordered = (
            [e for e in specific if e.name in overrides]
            + expanded
            + [e for e in specific if e.name not in overrides]
        )
        result[point] = [_ref(point, entry) for entry in ordered]
    return result


def _unique(entries: Sequence[PluginEntry]) -> list[PluginEntry]:
    seen: set[str] = set()
    out = []
    for entry in entries:
        if entry.name not in seen:
            seen.add(entry.name)
            out.append(entry)
    return out


def _ref(point: str, entry: PluginEntry) -> PluginRef:
    # Weights matter at Score only; 0 means 1 there (kube-scheduler's getScoreWeights).
    return PluginRef(entry.name, (entry.weight or 1) if point == "score" else 1)
