# mypy: disable-error-code="empty-body"
"""The extension points: one hookspec per point of kube-scheduler's Scheduling Framework.

Plugins implement any subset with ``@kubesched.hookimpl`` methods on their plugin object. The
framework calls the implementations of each point **in the order the profile gives**, one plugin at
a time, and records which plugin returned what: pluggy's own call order (LIFO) and its merged
result list are not used for scheduling decisions (see docs/design.md).

Conventions for every hook below:
- ``state`` is the pod's :class:`~kubesched.CycleState` for this cycle.
- Returning ``None`` means Success, unless the docstring says otherwise.
- A hook that raises is turned into an ``Error`` status naming the plugin; the scheduler carries on
  with the next pod.
- An implementation may accept only the arguments it needs (pluggy's rule); it may not invent
  arguments that the spec lacks (caught at registration).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.events import ClusterEventWithHint
    from kubesched.framework.nodeinfo import NodeInfo
    from kubesched.framework.results import (
        NodeToStatus,
        PostFilterResult,
        PreFilterResult,
        QueuedPodInfo,
    )
    from kubesched.framework.status import Status

PROJECT = "kubesched"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# --- Queue side -------------------------------------------------------------------------------


@hookspec
def pre_enqueue(pod: Pod) -> Status | None:
    """Before a pod may enter the active queue.

    Any non-success status keeps the pod parked (gated) until an event this plugin registered
    arrives; the pod gets no Unschedulable condition. ``None``: the pod may be queued.
    """


@hookspec
def queue_sort_less(pod_a: QueuedPodInfo, pod_b: QueuedPodInfo) -> bool:
    """Whether ``pod_a`` should be scheduled before ``pod_b``.

    Exactly one QueueSort plugin is enabled, the same in every profile. Must return a bool.
    """


# --- Scheduling cycle -------------------------------------------------------------------------


@hookspec
def pre_filter(
    state: CycleState, pod: Pod, nodes: list[NodeInfo]
) -> PreFilterResult | Status | None:
    """Once per cycle, before Filter: precompute, or reject the pod outright.

    Return a :class:`~kubesched.PreFilterResult` to restrict the candidate nodes (intersected
    across plugins), ``Status.skip()`` to have this plugin's Filter skipped for this pod, a
    rejection to end the cycle, or ``None`` for Success over all nodes.
    """


@hookspec
def pre_filter_add_pod(
    state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
) -> Status | None:
    """PreFilter extension: update this plugin's cycle state as if ``pod_to_add`` ran on
    ``node_info``'s node (preemption and nominated pods evaluate such what-ifs).

    Only plugins that keep per-cycle state derived from other pods need it (kube-scheduler's
    ``PreFilterExtensions.AddPod``). ``None``: done.
    """


@hookspec
def pre_filter_remove_pod(
    state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
) -> Status | None:
    """PreFilter extension: update this plugin's cycle state as if ``pod_to_remove`` were gone
    from ``node_info``'s node (a preemption victim). ``None``: done."""


@hookspec
def filter(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
    """Per candidate node: can the pod run here?

    A rejection (Unschedulable, UnschedulableAndUnresolvable) excludes the node and its reasons
    go into the FailedScheduling message; ``Error`` aborts the cycle. ``None``: the node fits.
    """


@hookspec
def post_filter(
    state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
) -> PostFilterResult | Status | tuple[PostFilterResult | None, Status] | None:
    """Only when no node fits (e.g. preemption). Plugins run in order until one succeeds.

    Return a :class:`~kubesched.PostFilterResult` (optionally nominating a node) for Success, a
    Status with reasons (appended to the FailedScheduling message) otherwise, or kube's pair
    ``(PostFilterResult | None, Status)``: a Success with a message, or a rejection with
    ``PostFilterResult("")`` to clear the pod's nomination. ``None`` means the plugin could not
    help (Unschedulable without reasons). UnschedulableAndUnresolvable or an Error ends the point.
    """


@hookspec
def pre_score(state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
    """Once per cycle over the feasible nodes, before Score.

    ``Status.skip()`` skips this plugin's Score for the pod; an error aborts the cycle.
    """


@hookspec
def score(state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
    """Per feasible node: how good the node is for the pod, by this plugin's measure.

    Return an int (after NormalizeScore it must lie in [0, 100]); the framework multiplies it by the
    plugin's weight. Return an error ``Status`` to abort the cycle.
    """


@hookspec
def score_nodes(state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int] | Status:
    """Optional, beside :func:`score`: the same scores for all of ``nodes`` in one call.

    Return one int per node, in ``nodes``' order, each exactly what ``score`` would return for
    that node in this cycle, or a non-success ``Status`` to abort the cycle. The framework then
    calls this once per cycle instead of ``score`` once per node, which matters for a plugin
    whose Score cannot be reused across pods (it reads other pods' placement) and runs for
    thousands of nodes per pod. ``score`` stays the plugin's definition and is still called
    where each node's Score is recorded (``kubesched explain``, the testing Harness). A plugin
    with this hook and no ``score`` is refused where a profile names it (docs/design.md,
    "Whole-column Score").
    """


@hookspec
def sign_pod(pod: Pod) -> object:
    """What of ``pod`` this plugin's Filter and Score read, so that results can be reused.

    Two pods with the same signature get the same Filter status and the same Score from this
    plugin on a node in the same state (kube-scheduler's ``SignPlugin``). Return the fields you
    read as JSON-serialisable data (e.g. ``pod.tolerations``), ``None`` if you read nothing of
    the pod, or ``Status.unschedulable(...)`` when this pod cannot be signed (your result also
    depends on other nodes or other pods' placement). What else a result depends on besides the
    pod and the node's own state (its ``NodeInfo``) goes into the returned data too (e.g. a
    cluster-wide count's version).

    While every plugin whose Filter (or Score) runs for a pod signed it, the framework reuses
    each node's Filter status (or raw scores) from an earlier pod with the same signature, for
    as long as the node's ``NodeInfo.generation`` is unchanged. A plugin without this hook is
    never reused, which is always correct and only slower (docs/design.md, "Reusing results
    across pods").
    """


@hookspec
def normalize_score(state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
    """After all of this plugin's Score calls: rescale ``scores`` (node name -> score) in place
    to [0, 100]. ``None``: done."""


@hookspec
def reserve(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """The pod is assumed on ``node_name``: claim what the plugin tracks.

    Any non-success triggers Unreserve of every Reserve plugin in reverse order and a retry.
    """


@hookspec
def unreserve(state: CycleState, pod: Pod, node_name: str) -> None:
    """Undo :func:`reserve` after a later failure. Must be idempotent; the return is ignored."""


@hookspec
def permit(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Last word before binding: allow (``None``), reject, or ``Status.wait(timeout)``.

    A waiting pod is released when every waiting plugin allowed it through the handle
    (``handle.waiting_pods``), rejected when one rejects it or the timeout (capped at 15 min) ends.
    The pod being permitted joins ``handle.waiting_pods`` only after every Permit plugin answered.
    """


# --- Binding cycle ----------------------------------------------------------------------------


@hookspec
def pre_bind_pre_flight(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """At the start of the binding cycle, before Permit's wait: will this plugin's PreBind
    have work to do for the pod (kube-scheduler's ``PreBindPreFlight``)?

    ``None`` (Success): yes; ``Status.skip()``: no, and its PreBind is not called for this pod;
    an ``Error`` fails the binding. Any other code is treated as an Error. When some PreBind
    plugin answers Success, or the pod waits at Permit, the scheduler first writes the chosen
    node to the pod's ``status.nominatedNodeName`` so that other components (and a restarted
    scheduler) know where it is going (kube's ``NominatedNodeNameForExpectation``). A PreBind
    plugin without this hook counts as Success. Must be cheap: read the cycle state only.
    """


@hookspec
def pre_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Before binding (e.g. provision a volume). A non-success fails the binding. Not called
    when this plugin's :func:`pre_bind_pre_flight` returned ``Status.skip()`` for the pod."""


@hookspec
def bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Bind the pod. ``Status.skip()`` hands the pod to the next Bind plugin; ``None``: bound."""


@hookspec
def post_bind(state: CycleState, pod: Pod, node_name: str) -> None:
    """Informational, after a successful bind. The return is ignored."""


# --- Cluster events ---------------------------------------------------------------------------


@hookspec
def events_to_register() -> list[ClusterEventWithHint]:
    """The cluster events that can make a pod this plugin rejected schedulable again.

    Called once when the profile is built. ``None`` or an empty list: the plugin's rejected pods
    wait for the periodic flush of the unschedulable pool.
    """


#: Extension point name (as in a profile's ``plugins``) -> hook name, in the order they run.
EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort_less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}
#: Hooks that belong to a point without being one of a profile's ``plugins`` fields.
COMPANION_HOOKS: dict[str, str] = {
    "pre_filter_add_pod": "preFilter",
    "pre_filter_remove_pod": "preFilter",
    "normalize_score": "score",
    "score_nodes": "score",
    "sign_pod": "",
    "unreserve": "reserve",
    "pre_bind_pre_flight": "preBind",
    "events_to_register": "",
}
