"""The snapshot's journal of replaced node positions, and NodeTally reading only those.

PodTopologySpread and InterPodAffinity keep their per-domain counts in a NodeTally across
cycles. Without the journal each cycle compared every one of the snapshot's NodeInfos with the
one it had counted (5,000 comparisons per pod at 5,000 nodes) to find the one or two that
changed; with it the tally reads the positions the cache swapped since its last call."""

from __future__ import annotations

import random
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import NodeInfo, Pod
from kubesched.engine.cache import Cache
from kubesched.framework.helpers import NodeTally
from kubesched.framework.snapshot import NodeListJournal, Snapshot
from kubesched.testing.builders import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


def _web_pods_per_zone(info: NodeInfo) -> list[tuple[str, int]]:
    zone = info.node.labels.get(ZONE, "")  # type: ignore[union-attr]
    return [(zone, sum(1 for p in info.pods.values() if p.labels.get("app") == "web"))]


def _pod(i: int, app: str = "web") -> Pod:
    return make_pod(f"p{i}").uid(f"p{i}").label("app", app).obj()


def _cluster(nodes: int) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for i in range(nodes):
        cache.add_node(make_node(f"n{i}").zone(f"z{i % 3}").obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


class _CountingList(list):
    """A node list that counts how many positions were read."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        type(self).reads += 1
        return super().__getitem__(index)


def test_the_journal_lists_the_positions_the_cache_replaced() -> None:
    cache, snapshot = _cluster(5)
    journal = snapshot.journal
    assert journal.nodes is snapshot.node_infos and journal.replaced == []
    cache.assume_pod(_pod(1), "n3")
    cache.assume_pod(_pod(2), "n1")
    cache.update_snapshot(snapshot)
    assert snapshot.journal is journal
    assert sorted(journal.replaced) == [1, 3]
    cache.add_node(make_node("n5").obj())  # a new member: a new list, a new journal
    cache.update_snapshot(snapshot)
    assert snapshot.journal is not journal
    assert snapshot.journal.nodes is snapshot.node_infos and snapshot.journal.replaced == []


def test_a_tally_given_the_journal_reads_only_the_replaced_positions() -> None:
    cache, snapshot = _cluster(200)
    snapshot.node_infos = _CountingList(snapshot.node_infos)
    snapshot.journal = NodeListJournal(snapshot.node_infos)
    tally: NodeTally[str] = NodeTally()
    tally.refresh(snapshot.node_infos, _web_pods_per_zone, snapshot.journal)
    cache.assume_pod(_pod(1), "n7")
    cache.update_snapshot(snapshot)
    _CountingList.reads = 0
    totals = tally.refresh(snapshot.node_infos, _web_pods_per_zone, snapshot.journal)
    assert totals == {"z0": 0, "z1": 1, "z2": 0}
    assert _CountingList.reads == 1, "only n7's position is read, not all 200"


def test_a_journal_of_another_list_is_not_trusted() -> None:
    cache, snapshot = _cluster(6)
    tally: NodeTally[str] = NodeTally()
    sublist = snapshot.node_infos[:3]
    tally.refresh(sublist, _web_pods_per_zone, snapshot.journal)
    cache.assume_pod(_pod(1), "n1")
    cache.update_snapshot(snapshot)
    sublist = snapshot.node_infos[:3]  # the caller's own list: the journal is not about it
    assert tally.refresh(sublist, _web_pods_per_zone, snapshot.journal) == {
        "z0": 0,
        "z1": 1,
        "z2": 0,
    }


class _Churn:
    """One step of a generated history: ``a`` assumes a pod (made by ``pod(i, n)``) on a
    node, ``p`` forgets a placed pod, ``x`` deletes a node (n % 3 == 0) or adds one."""

    def __init__(self, cache: Cache, nodes: int, pod: Callable[[int, int], Pod]) -> None:
        self.cache, self.added, self.pod = cache, nodes, pod
        self.placed: list[Pod] = []

    def step(self, i: int, op: str, n: int) -> None:
        cache, names = self.cache, self.cache.node_names()
        if op == "a" and names:
            pod = self.pod(i, n)
            cache.assume_pod(pod, names[n % len(names)])
            self.placed.append(pod)
        elif op == "p" and self.placed:
            cache.forget_pod(self.placed.pop(n % len(self.placed)))
        elif op == "x":
            if n % 3 == 0 and len(names) > 1:
                cache.remove_node(make_node(names[n % len(names)]).obj())
            else:
                cache.add_node(make_node(f"n{self.added}").zone(f"z{n % 3}").obj())
                self.added += 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("apx"), st.integers(0, 10**6)), max_size=120))
def test_totals_with_the_journal_equal_a_full_recount(steps: list[tuple[str, int]]) -> None:
    """Pods assumed and forgotten, nodes added and deleted, refreshes in between (the journal
    reset once it reaches the list's length included): the kept tally always equals one
    counted from scratch."""
    cache, snapshot = _cluster(4)
    rng = random.Random(0)
    kept: NodeTally[str] = NodeTally()
    churn = _Churn(cache, 4, lambda i, n: _pod(i, rng.choice(["web", "db"])))
    for i, (op, n) in enumerate(steps):
        churn.step(i, op, n)
        if n % 2 == 0:
            cache.update_snapshot(snapshot)
            got = kept.refresh(snapshot.node_infos, _web_pods_per_zone, snapshot.journal)
            want = NodeTally().refresh(snapshot.node_infos, _web_pods_per_zone)
            assert got == want


def _anti_affinity_pods_per_zone(info: NodeInfo) -> list[tuple[str, int]]:
    """Nothing for a node without pods with required anti-affinity (a holder list's rule)."""
    if not info.pods_with_required_anti_affinity:
        return []
    zone = info.node.labels.get(ZONE, "")  # type: ignore[union-attr]
    return [(zone, len(info.pods_with_required_anti_affinity))]


def _affinity_pod(i: int, kind: int) -> Pod:
    """Kind 0: no terms; 1: preferred affinity; 2: required anti-affinity."""
    builder = make_pod(f"q{i}").uid(f"q{i}").label("app", "web")
    if kind == 1:
        builder = builder.pod_affinity(ZONE, {"app": "web"}, weight=5)
    elif kind == 2:
        builder = builder.pod_anti_affinity("kubernetes.io/hostname", {"app": "web"})
    return builder.obj()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("apx"), st.integers(0, 10**6), st.integers(0, 2)),
        max_size=120,
    )
)
def test_the_affinity_lists_kept_across_cycles_equal_lists_built_afresh(
    steps: list[tuple[str, int, int]],
) -> None:
    """Pods with and without affinity terms placed and forgotten, nodes added and deleted,
    the lists read between updates: the snapshot's kept lists always hold the nodes a fresh
    snapshot lists, the same NodeInfo objects, in snapshot order; a list handed out before
    an update is not changed by it. A tally over a holder list, told the journal, always
    equals one counted afresh."""
    cache, snapshot = _cluster(5)
    kinds = [kind for _, _, kind in steps]
    churn = _Churn(cache, 5, lambda i, n: _affinity_pod(i, kinds[i]))
    tally: NodeTally[str] = NodeTally()
    for i, (op, n, _) in enumerate(steps):
        churn.step(i, op, n)
        if n % 2 == 0:
            before = list(snapshot.have_pods_with_affinity)
            held = snapshot.have_pods_with_affinity
            cache.update_snapshot(snapshot)
            assert held == before, "a list handed out is never changed"
            fresh = Snapshot(snapshot.node_infos)
            for kept, want in (
                (snapshot.have_pods_with_affinity, fresh.have_pods_with_affinity),
                (
                    snapshot.have_pods_with_required_anti_affinity,
                    fresh.have_pods_with_required_anti_affinity,
                ),
            ):
                assert [id(i) for i in kept] == [id(i) for i in want]
        else:
            cache.update_snapshot(snapshot)
        holders = snapshot.have_pods_with_required_anti_affinity
        got = tally.refresh_members(holders, _anti_affinity_pods_per_zone, snapshot.journal)
        assert got == NodeTally().refresh(snapshot.node_infos, _anti_affinity_pods_per_zone)
