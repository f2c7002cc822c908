"""Pods, nodes, small test plugins and a ready profile for the DefaultPreemption tests.

The builders follow kube-scheduler's ``st.MakePod()``/``st.MakeNode()`` as
default_preemption_test.go uses them: a node's allocatable is exactly what the case gives, plus
32 pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched_default_preemption import NAME, DefaultPreemption

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    InMemoryBackend,
    Node,
    NodeInfo,
    Pod,
    Status,
    hookimpl,
    pod_requests,
)
from kubesched.testing.builders import make_pod
from kubesched.testing.harness import make_scheduler

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

PROFILE_NAME = "custom-scheduler"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_INSUFFICIENT_CPU = "Insufficient cpu"
#: kube's ``tf.ErrReasonFake``.
REASON_FAKE = "Nodes failed the fake plugin"


def epoch(seconds: int) -> str:
    """``epochTimeN`` of the kube tests (they differ by nanoseconds; seconds keep the order)."""
    return f"1970-01-01T00:00:{seconds:02d}Z"


def node(name: str, labels: Mapping[str, str] | None = None, **resources: str) -> Node:
    """A node whose allocatable is ``resources`` plus 32 pods (``st.MakeNode().Capacity``)."""
    allocatable = {"pods": "32", **resources}
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }
    )


def pod(
    name: str,
    *,
    priority: int | None = None,
    on: str = "",
    req: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    start: str = "",
    namespace: str = "default",
    policy: str = "",
    nominated: str = "",
    terminating: bool = False,
    conditions: Sequence[Mapping[str, str]] = (),
) -> Pod:
    """A pod as ``st.MakePod().Name(name).UID(name)...`` builds it."""
    builder = make_pod(name, namespace).uid(name)
    if priority is not None:
        builder.priority(priority)
    if on:
        builder.node(on)
    if req:
        builder.req(**req)
    if labels:
        builder.labels(**labels)
    if policy:
        builder.preemption_policy(policy)
    if nominated:
        builder.nominated(nominated)
    if terminating:
        builder.terminating()
    manifest = builder.manifest()
    status = manifest.setdefault("status", {})
    if start:
        status["startTime"] = start
    if conditions:
        status["conditions"] = [dict(c) for c in conditions]
    return Pod(manifest)


def pdb(
    match_labels: Mapping[str, str] | None,
    allowed: int = 0,
    disrupted: Iterable[str] = (),
    namespace: str = "default",
    name: str = "pdb",
) -> dict[str, Any]:
    """A raw PodDisruptionBudget (``match_labels=None``: no selector at all)."""
    spec: dict[str, Any] = {}
    if match_labels is not None:
        spec["selector"] = {"matchLabels": dict(match_labels)}
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2025-01-01T00:00:00Z" for p in disrupted}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def names(pods: Iterable[Pod]) -> list[str]:
    return sorted(p.name for p in pods)


# --- small plugins --------------------------------------------------------------------------------


class TestFit:
    """Filter: room for the pod's cpu and memory requests and one more pod (NodeResourcesFit's
    rule and reasons, Unresolvable when a request exceeds the whole node)."""

    __test__ = False
    name = "TestFit"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        reasons: list[str] = []
        unresolvable = False
        if len(node_info.pods) + 1 > node_info.allocatable.get("pods", 0):
            reasons.append(REASON_TOO_MANY_PODS)
        requests = pod_requests(pod)
        for resource in ("cpu", "memory"):
            want = requests.get(resource, 0)
            have = node_info.allocatable.get(resource, 0)
            if want > 0 and want > have - node_info.requested.get(resource, 0):
                reasons.append(f"Insufficient {resource}")
                unresolvable = unresolvable or want > have
        if not reasons:
            return None
        return Status.unresolvable(*reasons) if unresolvable else Status.unschedulable(*reasons)

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]


class FakeFilter:
    """kube's ``FakeFilterPlugin``: counts its calls; every node gets ``args.code``."""

    name = "FakeFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.code = Code[args.get("code", "SUCCESS")]
        self.calls = 0

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        if self.code is Code.SUCCESS:
            return None
        return Status(self.code, f"injecting failure for pod {pod.name}")


class FalseFilter:
    name = "FalseFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable(REASON_FAKE)


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class MatchFilter:
    """Only the node named like the pod fits."""

    name = "MatchFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if pod.name == node_info.name else Status.unschedulable(REASON_FAKE)


class ErroringExtensions:
    """kube's ``TestPlugin``: AddPod/RemovePod fail on nodes labelled ``error=true``."""

    name = "ErroringExtensions"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> None:
        return None

    @hookimpl
    def pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod_to_schedule.name}")
        return None

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod_to_schedule.name}")
        return None


EXCLUSIVE_KEY = "PreFilterExclusiveFoo"
REASON_EXCLUSIVE = "node(s) already run a foo pod"


class ExclusiveFoo:
    """At most one pod labelled ``foo`` per node, counted in PreFilter and kept current only
    through the PreFilter extensions (a stand-in for InterPodAffinity's anti-affinity)."""

    name = "ExclusiveFoo"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> None:
        counts = {info.name: sum("foo" in p.labels for p in info.pods.values()) for info in nodes}
        state.write(EXCLUSIVE_KEY, counts)

    @hookimpl
    def pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> None:
        if "foo" in pod_to_add.labels:
            counts = state.read(EXCLUSIVE_KEY)
            counts[node_info.name] = counts.get(node_info.name, 0) + 1

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> None:
        if "foo" in pod_to_remove.labels:
            counts = state.read(EXCLUSIVE_KEY)
            counts[node_info.name] = counts.get(node_info.name, 0) - 1

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if "foo" in pod.labels and state.read(EXCLUSIVE_KEY).get(node_info.name, 0) > 0:
            return Status.unschedulable(REASON_EXCLUSIVE)
        return None


TEST_PLUGINS: dict[str, type] = {
    cls.name: cls
    for cls in (
        TestFit,
        FakeFilter,
        FalseFilter,
        TrueFilter,
        MatchFilter,
        ErroringExtensions,
        ExclusiveFoo,
    )
}


def profile(
    filters: Sequence[str] = ("TestFit",),
    pre_filters: Sequence[str] = (),
    args: Mapping[str, Any] | None = None,
    fake_code: str = "",
) -> dict[str, Any]:
    """A profile body: ``pre_filters`` (and the filters that have a PreFilter), ``filters`` in
    order, DefaultPreemption at PostFilter."""
    with_pre_filter = [*pre_filters, *(f for f in filters if f == ExclusiveFoo.name)]
    if fake_code:
        filters = [FakeFilter.name, *filters]
    plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": f} for f in filters]},
        "postFilter": {"enabled": [{"name": NAME}]},
    }
    if with_pre_filter:
        plugins["preFilter"] = {"enabled": [{"name": p} for p in dict.fromkeys(with_pre_filter)]}
    config: list[dict[str, Any]] = []
    if args is not None:
        config.append({"name": NAME, "args": dict(args)})
    if fake_code:
        config.append({"name": FakeFilter.name, "args": {"code": fake_code}})
    body: dict[str, Any] = {"plugins": plugins}
    if config:
        body["pluginConfig"] = config
    return body


class ApiLog:
    """The backend calls preemption makes, in order, as tuples:
    ``("patch", pod, conditions, nominated_node_name)``, ``("delete", pod)``,
    ``("event", pod, type, reason, action, note, reporting_controller, related)``.

    ``refuse`` maps ``(call, pod name)`` to the exception that call raises instead;
    ``stored`` keeps each deleted pod as the backend held it just before (with its condition).
    """

    def __init__(self, backend: InMemoryBackend) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.refuse: dict[tuple[str, str], Exception] = {}
        self.stored: dict[str, Pod] = {}
        patch, delete, record = backend.patch_pod_status, backend.delete_pod, backend.record_event

        def patch_pod_status(
            pod: Pod,
            *,
            conditions: Sequence[Mapping[str, Any]] = (),
            nominated_node_name: str | None = None,
        ) -> bool:
            self._check("patch", pod)
            self.calls.append(
                ("patch", pod.name, [dict(c) for c in conditions], nominated_node_name)
            )
            return patch(pod, conditions=conditions, nominated_node_name=nominated_node_name)

        def delete_pod(pod: Pod) -> bool:
            self._check("delete", pod)
            self.calls.append(("delete", pod.name))
            if (current := backend.pods.get(pod.uid)) is not None:
                self.stored[pod.name] = current
            return delete(pod)

        def record_event(regarding: Pod, **fields: Any) -> None:
            self.calls.append(
                (
                    "event",
                    regarding.name,
                    fields["event_type"],
                    fields["reason"],
                    fields["action"],
                    fields["note"],
                    fields["reporting_controller"],
                    fields["related"].name if fields.get("related") is not None else None,
                )
            )
            record(regarding, **fields)

        backend.patch_pod_status = patch_pod_status  # type: ignore[method-assign]
        backend.delete_pod = delete_pod  # type: ignore[method-assign]
        backend.record_event = record_event  # type: ignore[method-assign]

    def _check(self, call: str, pod: Pod) -> None:
        if (error := self.refuse.get((call, pod.name))) is not None:
            raise error

    def kinds(self) -> list[tuple[str, str]]:
        """``(call, pod name)`` of every call, in order."""
        return [(call[0], call[1]) for call in self.calls]


class Env:
    """A scheduler (not running cycles) over ``nodes`` and ``pods``: the framework, the plugin,
    the snapshot its handle reads, the in-memory backend and the log of preemption's calls."""

    def __init__(
        self,
        nodes: Sequence[Node],
        pods: Sequence[Pod] = (),
        *,
        pdbs: Sequence[Mapping[str, Any]] = (),
        extra: Mapping[str, type] | None = None,
        seed: int = 0,
        extenders: Sequence[Mapping[str, Any]] = (),
        **profile_options: Any,
    ) -> None:
        plugins = {NAME: DefaultPreemption, **TEST_PLUGINS, **(extra or {})}
        top_level = {"extenders": [dict(e) for e in extenders]} if extenders else {}
        self.scheduler, self.backend = make_scheduler(
            plugins, profile(**profile_options), nodes, pods, seed=seed, **top_level
        )
        self.backend.objects["PodDisruptionBudget"] = [dict(p) for p in pdbs]
        self.framework = self.scheduler.frameworks[PROFILE_NAME]
        self.plugin: DefaultPreemption = self.framework.plugins[NAME]
        self.api = ApiLog(self.backend)
        self.refresh()

    def refresh(self) -> None:
        """Bring the snapshot up to date with the backend (as each scheduling cycle does)."""
        self.scheduler.cache.update_snapshot(self.scheduler.snapshot)

    @property
    def node_infos(self) -> list[NodeInfo]:
        return self.scheduler.snapshot.node_infos

    def node_info(self, name: str) -> NodeInfo:
        info = self.scheduler.snapshot.get(name)
        assert info is not None, name
        return info

    def state(self, preemptor: Pod) -> CycleState:
        """A cycle state with the profile's PreFilter run for ``preemptor``."""
        state = CycleState()
        _result, status, _ = self.framework.run_pre_filter(state, preemptor, self.node_infos)
        assert status.is_success(), status
        return state

    def filter_calls(self) -> int:
        return self.framework.plugins[FakeFilter.name].calls

    def pods_left(self) -> list[str]:
        return sorted(p.name for p in self.backend.pods.values())
