"""The framework's plugin manager parses each plugin class's hooks once and reuses the parse for
its other instances; what it registers is always what pluggy's own manager would register,
including after a class is changed and for hooks set on an instance."""

from __future__ import annotations

import pluggy
import pytest

from kubesched import hookimpl
from kubesched.framework import hookspecs
from kubesched.framework.registry import HookManager


def _registered(manager_class: type[pluggy.PluginManager], plugin: object) -> dict[str, object]:
    """hook name -> the function registered for ``plugin`` (bound as pluggy binds it)."""
    manager = manager_class(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(plugin, name="P")
    found = {}
    for name in hookspecs.EXTENSION_POINTS.values():
        for impl in getattr(manager.hook, name).get_hookimpls():
            found[name] = impl.function
    return found


def _same_as_pluggy(plugin: object) -> dict[str, object]:
    ours = _registered(HookManager, plugin)
    assert ours == _registered(pluggy.PluginManager, plugin)
    return ours


class Filtering:
    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    def score(self, state, pod, node_info):  # not a hook: no @hookimpl
        return 0


def test_each_instance_gets_its_own_bound_hooks():
    first, second = Filtering(), Filtering()
    assert _same_as_pluggy(first) == {"filter": first.filter}
    assert _same_as_pluggy(second) == {"filter": second.filter}


def test_a_method_replaced_on_the_class_is_parsed_again(monkeypatch):
    class Changing:
        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    assert list(_same_as_pluggy(Changing())) == ["filter"]

    def plain_filter(self, state, pod, node_info):
        return None

    @hookimpl
    def marked_score(self, state, pod, node_info):
        return 0

    monkeypatch.setattr(Changing, "filter", plain_filter)
    monkeypatch.setattr(Changing, "score", marked_score, raising=False)
    plugin = Changing()
    assert _same_as_pluggy(plugin) == {"score": plugin.score}


def test_a_hook_set_on_the_instance_is_found_and_shadows_the_class():
    @hookimpl
    def score(state, pod, node_info):
        return 7

    plugin = Filtering()
    plugin.score = score  # type: ignore[method-assign]
    assert _same_as_pluggy(plugin) == {"filter": plugin.filter, "score": score}
    assert list(_same_as_pluggy(Filtering())) == ["filter"]


def test_slots_are_read_per_instance():
    class Slotted:
        __slots__ = ("score",)

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    @hookimpl
    def score(state, pod, node_info):
        return 1

    with_score, without = Slotted(), Slotted()
    with_score.score = score
    assert _same_as_pluggy(with_score) == {"filter": with_score.filter, "score": score}
    assert list(_same_as_pluggy(without)) == ["filter"]


def test_a_subclass_overriding_a_hook_without_the_marker_is_not_registered():
    class Quiet(Filtering):
        def filter(self, state, pod, node_info):
            return None

    _same_as_pluggy(Filtering())  # the base class parsed first must not answer for the subclass
    assert _same_as_pluggy(Quiet()) == {}


def test_a_hook_with_an_argument_the_spec_lacks_is_refused_the_same_way():
    class Invented:
        @hookimpl
        def filter(self, state, pod, node_info, extra):
            return None

    messages = []
    # Twice through ours: once parsed, once from what was kept.
    for manager_class in (HookManager, HookManager, pluggy.PluginManager):
        with pytest.raises(pluggy.PluginValidationError) as caught:
            _registered(manager_class, Invented())
        messages.append(str(caught.value).replace(manager_class.__name__, ""))
    assert messages[0] == messages[1] == messages[2]
    assert "extra" in messages[0]
