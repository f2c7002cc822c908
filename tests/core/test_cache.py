"""The cache counts assumed pods at once, turns them into ordinary pods when the watch confirms
them, frees them when forgotten, and keeps the snapshot up to date copying only what changed.

Cases follow kube-scheduler's ``pkg/scheduler/backend/cache/cache_test.go``.
"""

from __future__ import annotations

import pytest

from kubesched import Node, Pod, Snapshot
from kubesched.api.objects import CPU
from kubesched.engine.cache import Cache
from kubesched.testing.builders import make_node, make_pod


def node(name: str, cpu: str = "4") -> Node:
    return make_node(name).capacity(cpu=cpu).obj()


def pod(name: str, cpu: str = "1", node_name: str = "") -> Pod:
    builder = make_pod(name).req(cpu=cpu)
    if node_name:
        builder = builder.node(node_name)
    return builder.obj()


def cache_with(*names: str) -> Cache:
    cache = Cache()
    for name in names:
        cache.add_node(node(name))
    return cache


def snap(cache: Cache, snapshot: Snapshot | None = None) -> Snapshot:
    snapshot = snapshot if snapshot is not None else Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


def cpu_on(snapshot: Snapshot, name: str) -> int:
    info = snapshot.get(name)
    assert info is not None, f"{name} not in the snapshot"
    return info.requested.get(CPU, 0)


def pods_on(snapshot: Snapshot, name: str) -> list[str]:
    info = snapshot.get(name)
    assert info is not None
    return sorted(p.name for p in info.pods.values())


# -- assume, forget, confirm ---------------------------------------------------------------------


def test_assumed_pod_counts_at_once() -> None:
    cache = cache_with("n1", "n2")
    cache.assume_pod(pod("a", "1500m"), "n1")
    snapshot = snap(cache)
    assert (cpu_on(snapshot, "n1"), cpu_on(snapshot, "n2")) == (1500, 0)
    assert pods_on(snapshot, "n1") == ["a"]
    assert cache.is_assumed("default-a-uid") and cache.pod_count() == 1


def test_assuming_a_pod_twice_is_refused() -> None:
    cache = cache_with("n1")
    cache.assume_pod(pod("a"), "n1")
    with pytest.raises(ValueError, match="default/a is already in the cache"):
        cache.assume_pod(pod("a"), "n1")


@pytest.mark.parametrize("pods", [["a"], ["a", "b"], ["a", "b", "c"]], ids=["one", "two", "three"])
def test_forget_frees_what_assume_took(pods: list[str]) -> None:
    cache = cache_with("n1")
    snapshot = snap(cache)
    for name in pods:
        cache.assume_pod(pod(name), "n1")
    assert cpu_on(snap(cache, snapshot), "n1") == 1000 * len(pods)
    for name in pods:
        cache.forget_pod(pod(name))
    snap(cache, snapshot)
    assert (cpu_on(snapshot, "n1"), pods_on(snapshot, "n1"), cache.pod_count()) == (0, [], 0)
    assert not cache.is_assumed("default-a-uid")


def test_forget_leaves_a_confirmed_pod_alone() -> None:
    cache = cache_with("n1")
    cache.assume_pod(pod("a"), "n1")
    cache.add_pod(pod("a", node_name="n1"))
    cache.forget_pod(pod("a"))  # too late: the binding was confirmed
    assert cpu_on(snap(cache), "n1") == 1000 and cache.pod_count() == 1


@pytest.mark.parametrize(
    ("assumed_on", "bound_to", "expected"),
    [
        ("n1", "n1", {"n1": 1000, "n2": 0}),
        ("n1", "n2", {"n1": 0, "n2": 1000}),
    ],
    ids=["same-node", "different-node"],
)
def test_watch_confirms_an_assumed_pod(
    assumed_on: str, bound_to: str, expected: dict[str, int]
) -> None:
    cache = cache_with("n1", "n2")
    cache.assume_pod(pod("a"), assumed_on)
    cache.add_pod(pod("a", node_name=bound_to))
    snapshot = snap(cache)
    assert {name: cpu_on(snapshot, name) for name in ("n1", "n2")} == expected
    assert not cache.is_assumed("default-a-uid") and cache.pod_count() == 1


def test_confirmed_pod_takes_the_bound_version() -> None:
    cache = cache_with("n1")
    cache.assume_pod(pod("a", "1"), "n1")
    cache.add_pod(pod("a", "2", node_name="n1"))
    assert cpu_on(snap(cache), "n1") == 2000


# -- bound pods seen by the watch ----------------------------------------------------------------


def test_add_update_remove_a_bound_pod() -> None:
    cache = cache_with("n1")
    snapshot = snap(cache)
    cache.add_pod(pod("a", "1", "n1"))
    assert cpu_on(snap(cache, snapshot), "n1") == 1000
    cache.update_pod(pod("a", "1", "n1"), pod("a", "3", "n1"))
    assert cpu_on(snap(cache, snapshot), "n1") == 3000
    cache.remove_pod(pod("a", "3", "n1"))
    assert cpu_on(snap(cache, snapshot), "n1") == 0
    assert cache.pod_count() == 0


def test_adding_the_same_pod_twice_counts_it_once() -> None:
    cache = cache_with("n1")
    cache.add_pod(pod("a", "1", "n1"))
    cache.add_pod(pod("a", "1", "n1"))
    assert cpu_on(snap(cache), "n1") == 1000


def test_remove_an_assumed_pod() -> None:
    cache = cache_with("n1")
    cache.assume_pod(pod("a"), "n1")
    cache.remove_pod(pod("a"))
    assert cpu_on(snap(cache), "n1") == 0 and not cache.is_assumed("default-a-uid")


def test_removing_an_unknown_pod_is_harmless() -> None:
    cache = cache_with("n1")
    cache.remove_pod(pod("ghost", node_name="n1"))
    cache.forget_pod(pod("ghost"))
    assert cpu_on(snap(cache), "n1") == 0


def test_pod_seen_before_its_node() -> None:
    cache = Cache()
    cache.add_pod(pod("a", "1", "n1"))
    assert len(snap(cache)) == 0 and cache.node_names() == []
    cache.add_node(node("n1"))
    snapshot = snap(cache)
    assert cpu_on(snapshot, "n1") == 1000 and cache.node_names() == ["n1"]


# -- nodes ---------------------------------------------------------------------------------------


def test_deleted_node_with_pods_is_a_ghost() -> None:
    cache = cache_with("n1", "n2")
    cache.add_pod(pod("a", "1", "n1"))
    snapshot = snap(cache)
    cache.remove_node(node("n1"))
    snap(cache, snapshot)
    # Gone from the nodes a cycle may use ...
    assert cache.node_names() == ["n2"] and [i.name for i in snapshot] == ["n2"]
    assert snapshot.get("n1") is None
    # ... but its pods still count if the node comes back before they are deleted.
    cache.add_node(node("n1"))
    assert cpu_on(snap(cache, snapshot), "n1") == 1000
    assert cache.node_names() == ["n1", "n2"]


def test_ghost_goes_away_with_its_last_pod() -> None:
    cache = cache_with("n1")
    cache.add_pod(pod("a", "1", "n1"))
    cache.remove_node(node("n1"))
    cache.remove_pod(pod("a", "1", "n1"))
    cache.add_node(node("n1"))
    assert cpu_on(snap(cache), "n1") == 0 and cache.pod_count() == 0


def test_deleted_node_without_pods_is_gone() -> None:
    cache = cache_with("n1", "n2")
    snapshot = snap(cache)
    cache.remove_node(node("n1"))
    cache.remove_node(node("never-seen"))
    assert [i.name for i in snap(cache, snapshot)] == ["n2"] and cache.node_names() == ["n2"]


def test_node_update_is_seen() -> None:
    cache = cache_with("n1")
    cache.add_pod(pod("a", "1", "n1"))
    snapshot = snap(cache)
    cache.update_node(node("n1", cpu="8"))
    info = snap(cache, snapshot).get("n1")
    assert info is not None
    assert (info.allocatable[CPU], info.requested[CPU]) == (8000, 1000)


# -- the snapshot --------------------------------------------------------------------------------


def test_snapshot_is_a_copy() -> None:
    cache = cache_with("n1")
    snapshot = snap(cache)
    cache.add_pod(pod("a", "1", "n1"))
    assert cpu_on(snapshot, "n1") == 0  # until the next update
    assert cpu_on(snap(cache, snapshot), "n1") == 1000


@pytest.mark.parametrize(
    ("change", "copied"),
    [
        (lambda c: None, set()),
        (lambda c: c.add_pod(pod("a", "1", "n2")), {"n2"}),
        (lambda c: c.assume_pod(pod("a"), "n1"), {"n1"}),
        (lambda c: c.update_node(node("n3", cpu="8")), {"n3"}),
        (lambda c: (c.add_pod(pod("a", "1", "n1")), c.add_pod(pod("b", "1", "n3"))), {"n1", "n3"}),
        (lambda c: c.add_pod(pod("a", "1", "elsewhere")), set()),
    ],
    ids=["nothing", "pod-added", "pod-assumed", "node-updated", "two-nodes", "pod-on-unknown-node"],
)
def test_snapshot_copies_only_changed_nodes(change, copied: set[str]) -> None:
    cache = cache_with("n1", "n2", "n3")
    snapshot = snap(cache)
    before = {info.name: info for info in snapshot}
    change(cache)
    snap(cache, snapshot)
    after = {info.name: info for info in snapshot}
    assert after.keys() == before.keys()
    assert {name for name in after if after[name] is not before[name]} == copied
    assert [info.name for info in snapshot] == ["n1", "n2", "n3"]  # positions kept


def test_snapshot_membership_changes() -> None:
    cache = cache_with("n1", "n2", "n3")
    snapshot = snap(cache)
    before = {info.name: info for info in snapshot}
    cache.remove_node(node("n2"))
    cache.add_node(node("n4"))
    snap(cache, snapshot)
    assert [info.name for info in snapshot] == ["n1", "n3", "n4"]
    assert snapshot.get("n1") is before["n1"] and snapshot.get("n3") is before["n3"]
    assert len(snapshot) == 3 and snapshot.get("n2") is None
    # A node deleted and added again comes back last, as a new member.
    cache.remove_node(node("n1"))
    cache.add_node(node("n1"))
    assert [info.name for info in snap(cache, snapshot)] == ["n3", "n4", "n1"]


def test_membership_change_and_pod_change_in_one_update() -> None:
    cache = cache_with("n1", "n2")
    snapshot = snap(cache)
    kept = snapshot.get("n2")
    cache.add_pod(pod("a", "1", "n1"))
    cache.add_node(node("n3"))
    snap(cache, snapshot)
    assert [info.name for info in snapshot] == ["n1", "n2", "n3"]
    assert cpu_on(snapshot, "n1") == 1000 and snapshot.get("n2") is kept


def test_a_second_snapshot_gets_every_node() -> None:
    cache = cache_with("n1", "n2")
    first = snap(cache)
    cache.add_pod(pod("a", "1", "n1"))
    second = snap(cache)  # a fresh snapshot, not the one the cache updated before
    assert [info.name for info in second] == ["n1", "n2"]
    assert cpu_on(second, "n1") == 1000
    cache.add_pod(pod("b", "1", "n2"))
    snap(cache, first)
    assert (cpu_on(first, "n1"), cpu_on(first, "n2")) == (1000, 1000)


def test_snapshot_built_from_node_infos() -> None:
    cache = cache_with("b", "a")
    infos = list(snap(cache))
    snapshot = Snapshot(infos)
    assert [i.name for i in snapshot] == ["b", "a"] and len(snapshot) == 2
    assert snapshot.get("a") is infos[1] and snapshot.get("zzz") is None


def test_snapshot_counts_nodes_per_image_and_follows_node_changes():
    from kubesched.testing.builders import make_node as _node

    cache = Cache()
    snap = Snapshot()
    cache.add_node(_node("a").images("nginx:1", "redis:7").obj())
    cache.add_node(_node("b").images("nginx:1").obj())
    cache.update_snapshot(snap)
    assert (snap.image_num_nodes("nginx:1"), snap.image_num_nodes("redis:7")) == (2, 1)
    assert snap.image_num_nodes("absent") == 0
    cache.update_node(_node("b").images("redis:7").obj())
    cache.remove_node(_node("a").obj())
    cache.update_snapshot(snap)
    assert (snap.image_num_nodes("nginx:1"), snap.image_num_nodes("redis:7")) == (0, 1)


def _version_after(cache: Cache, snapshot: Snapshot, change: str) -> int:
    name, _, images = change.partition(":")
    if name.startswith("-"):
        cache.remove_node(node(name[1:]))
    else:
        builder = make_node(name).capacity(cpu="4")
        cache.add_node((builder.images(images) if images else builder).obj())
    cache.update_snapshot(snapshot)
    return snapshot.images_version


@pytest.mark.parametrize(
    ("changes", "census_changes"),
    [
        (["churn", "-churn"], [False, False]),
        (["churn:nginx:1", "-churn"], [True, True]),
        (["imaged:nginx:1", "churn", "-churn"], [True, True, True]),
        (["imaged:nginx:1", "-imaged", "churn"], [True, True, False]),
    ],
    ids=[
        "nodes without images come and go: no census change",
        "a node with images comes and goes",
        "with images on some node, any node changes their spread",
        "once no node has images again, churn changes nothing",
    ],
)
def test_the_image_census_changes_only_when_it_can(
    changes: list[str], census_changes: list[bool]
) -> None:
    """ImageLocality signs pods with ``images_version``: a version bumped by every node added or
    deleted (SchedulingWithMixedChurn's nodes, which list no images) turned off the reuse of
    Filter results for every pod after each churn tick."""
    cache = cache_with("a", "b")
    snapshot = snap(cache)
    version = snapshot.images_version
    seen = []
    for change in changes:
        now = _version_after(cache, snapshot, change)
        seen.append(now != version)
        version = now
    assert seen == census_changes
