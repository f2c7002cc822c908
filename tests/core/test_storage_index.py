"""``kubesched.api.storage.IndexedLister``: a lister's objects by key, kept while the lister
hands out the same objects, and never past a change of one of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubesched.api.storage import IndexedLister
from kubesched.backends.memory import InMemoryBackend


def _pv(name: str, driver: str = "ebs.csi.aws.com") -> dict[str, Any]:
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"csi": {"driver": driver}},
    }


def _claim(namespace: str, name: str) -> dict[str, Any]:
    return {"kind": "PersistentVolumeClaim", "metadata": {"namespace": namespace, "name": name}}


def test_same_objects_same_index() -> None:
    listed = [_pv("a"), _pv("b")]
    index = IndexedLister(lambda: list(listed))
    first = index()
    assert first == {"a": listed[0], "b": listed[1]}
    assert index() is first


def test_namespaced_keys() -> None:
    index = IndexedLister(lambda: [_claim("default", "data")])
    assert list(index()) == ["default/data"]


Change = Callable[[list[dict[str, Any]]], None]


def _replace(listed: list[dict[str, Any]]) -> None:
    listed[0] = _pv("a", "other.csi.example.com")


def _add(listed: list[dict[str, Any]]) -> None:
    listed.append(_pv("c"))


def _remove(listed: list[dict[str, Any]]) -> None:
    del listed[0]


def _reorder(listed: list[dict[str, Any]]) -> None:
    listed.reverse()


@pytest.mark.parametrize(
    "change",
    [_replace, _add, _remove, _reorder],
    ids=["object replaced", "object added", "object removed", "objects reordered"],
)
@pytest.mark.parametrize("copies", [True, False], ids=["lister copies", "lister shares its list"])
def test_a_change_builds_a_new_index(change: Change, copies: bool) -> None:
    listed = [_pv("a"), _pv("b")]
    index = IndexedLister((lambda: list(listed)) if copies else (lambda: listed))
    before = index()
    change(listed)
    after = index()
    assert after is not before
    assert after == {str(pv["metadata"]["name"]): pv for pv in listed}


def test_follows_the_in_memory_backend_writes() -> None:
    backend = InMemoryBackend()
    backend.create_object("PersistentVolume", _pv("a"))
    index = IndexedLister(backend.lister("PersistentVolume"))
    before = index()
    assert index() is before
    updated = dict(before["a"], spec={"csi": {"driver": "other.csi.example.com"}})
    backend.update_object("PersistentVolume", updated)
    after = index()
    assert after is not before
    pv: Mapping[str, Any] = after["a"]
    assert pv["spec"]["csi"]["driver"] == "other.csi.example.com"
    backend.delete_object("PersistentVolume", "", "a")
    assert index() == {}
