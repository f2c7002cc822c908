"""The framework handle: what a plugin may reach besides its own arguments.

kube-scheduler's ``framework.Handle``, trimmed to what Python plugins use: the current snapshot,
the waiting pods (to allow or reject pods held at Permit), the cluster backend (to bind, or to
read objects a plugin needs), the profile's name and its parallelism; and, for preemption, the
nominated pods, clearing nominations, running API calls apart from the scheduling cycle, and
sending pods back to activeQ at once.

A Handle is built complete: the runtime that builds a profile's plugins binds its own
:class:`PluginsRunner` into the handle it gives them (:meth:`Handle.bound_to`), and the
scheduler passes the nominator and the activator in. A plugin never sees the runtime class.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.framework.status import Status
from kubesched.framework.waiting_pods import WaitingPods

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.backend import ClusterBackend
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.nodeinfo import NodeInfo
    from kubesched.framework.snapshot import Snapshot


__all__ = ["Handle", "PluginsRunner", "PodNominator"]


class PluginsRunner(Protocol):
    """The profile's plugins, run for a what-if (kube's ``framework.PluginsRunner``): what
    preemption asks when it tries a node without its victims."""

    def plugins_at(self, point: str) -> list[str]:
        """The plugins the profile runs at ``point`` (a profile field name: ``preFilter``,
        ``filter``, …), in order."""
        ...

    def filter_results_reusable(self, state: CycleState) -> bool:
        """Whether every Filter plugin running in ``state``'s cycle signed the pod, so that
        their answers on a node follow from the pod's signature and the node alone."""
        ...

    def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """``None`` when every Filter plugin passes ``pod`` on ``node_info``, else the first
        rejection (with its plugin)."""
        ...

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """:meth:`run_filter`, with the pods nominated to the node at the pod's priority or
        above counted in and out, as kube's ``RunFilterPluginsWithNominatedPods``."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's state updated as if ``pod_to_add`` ran on the node."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's state updated as if ``pod_to_remove`` were gone."""
        ...


class PodNominator(Protocol):
    """The pods preemption nominated to nodes and that are not bound yet (the queue's)."""

    def nominated_pods_for_node(self, node_name: str) -> Iterable[Pod]: ...

    def node_names(self) -> frozenset[str]: ...

    def node_of(self, pod: Pod) -> str: ...

    def remove(self, pod: Pod) -> None: ...

    def __len__(self) -> int: ...


log = logging.getLogger(__name__)


class Handle:
    """Given to every plugin factory; one per profile."""

    def __init__(
        self,
        profile_name: str,
        backend: ClusterBackend,
        snapshot: Callable[[], Snapshot],
        waiting_pods: WaitingPods | None = None,
        parallelism: int = 16,
        rng: random.Random | None = None,
        extenders: Sequence[Any] = (),
        *,
        runner: PluginsRunner | None = None,
        nominator: PodNominator | None = None,
        activator: Callable[[Iterable[Pod]], object] | None = None,
        background: Callable[[Callable[[], object]], object] | None = None,
    ) -> None:
        """``runner``: the profile's plugins for what-if checks (the runtime binds its own,
        :meth:`bound_to`); ``nominator``: the nominated pods; ``activator``: moves pods to
        activeQ for :meth:`activate`; ``background``: runs :meth:`run_in_background`'s calls
        (tests hold them back with it). Each may be left out where nothing uses it (a plugin's
        unit test): the handle then answers as a cluster with none would."""
        self.profile_name = profile_name
        #: The configuration's HTTP extenders (:class:`kubesched.engine.extender.HTTPExtender`), in
        #: kube-scheduler's order: DefaultPreemption asks those with a preemptVerb.
        self.extenders = list(extenders)
        self.backend = backend
        self._snapshot = snapshot
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self.parallelism = parallelism
        self.rng = rng or random.Random()
        self._runner = runner
        self.nominator = nominator
        self.activator = activator
        #: Runs :meth:`run_in_background`'s calls when set (tests use it to hold them back).
        self.background = background

    def bound_to(self, runner: PluginsRunner) -> Handle:
        """This handle with ``runner`` as its plugins runner (a new handle; this one is left
        as it is). The runtime calls it before it builds the profile's plugins."""
        return Handle(
            self.profile_name,
            self.backend,
            self._snapshot,
            self.waiting_pods,
            self.parallelism,
            self.rng,
            self.extenders,
            runner=runner,
            nominator=self.nominator,
            activator=self.activator,
            background=self.background,
        )

    # -- running the profile's plugins (preemption's what-if) ----------------------------------
    def _plugins(self) -> PluginsRunner:
        if self._runner is None:
            raise RuntimeError(
                "this Handle has no plugins runner: build the plugin through a profile "
                "(kubesched.testing's Harness), not with a bare Handle"
            )
        return self._runner

    def plugins_at(self, point: str) -> list[str]:
        """The plugins the profile runs at ``point`` (``preFilter``, ``filter``, …), in order:
        a plugin whose behaviour depends on whether another point of its own runs asks here."""
        return self._plugins().plugins_at(point)

    def filter_results_reusable(self, state: CycleState) -> bool:
        """Whether the Filter answers of ``state``'s pod follow from its signature and the
        node alone (see :class:`PluginsRunner`): preemption reuses a node's dry run then."""
        return self._plugins().filter_results_reusable(state)

    def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """The profile's Filter plugins for ``pod`` on the node (see :class:`PluginsRunner`)."""
        return self._plugins().run_filter(state, pod, node_info)

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """The profile's Filter plugins with nominated pods counted (see :class:`PluginsRunner`)."""
        return self._plugins().run_filter_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """The PreFilter plugins' AddPod extensions (see :class:`PluginsRunner`)."""
        return self._plugins().run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """The PreFilter plugins' RemovePod extensions (see :class:`PluginsRunner`)."""
        return self._plugins().run_pre_filter_extension_remove_pod(
            state, pod, pod_to_remove, node_info
        )

    def snapshot(self) -> Snapshot:
        """The snapshot the current scheduling cycle reads (nodes with their pods)."""
        return self._snapshot()

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Pods nominated to ``node_name`` by preemption and not yet bound."""
        if self.nominator is None:
            return []
        return list(self.nominator.nominated_pods_for_node(node_name))

    def nodes_with_nominated_pods(self) -> frozenset[str]:
        """The nodes some pod is nominated to (a Filter result there depends on those pods)."""
        if self.nominator is None:
            return frozenset()
        return self.nominator.node_names()

    def has_nominated_pods(self) -> bool:
        """Whether any pod is nominated anywhere (lets Filter skip the per-node check)."""
        return self.nominator is not None and len(self.nominator) > 0

    def lister(self, kind: str) -> Callable[[], list[Mapping[str, Any]]]:
        """A function listing the cluster's objects of ``kind`` (e.g. ``PodDisruptionBudget``,
        ``Namespace``, ``Service``, ``PersistentVolumeClaim``, ``CSINode``) as raw mappings, kept
        current by the backend. Plugins must not change what it returns; writes go through the
        backend (``update_object``, ``patch_object``, ``create_object``).

        Call it in the plugin's constructor so the backend knows to watch that kind (and to
        deliver its cluster events, for kinds that are an ``EventResource``); an empty list when
        the backend has no such objects.
        """
        return self.backend.lister(kind)

    def clear_nominated_node_name(self, *pods: Pod) -> list[Exception]:
        """Take each pod's nomination away (kube's ``clearNominatedNodeName``): the nominator
        forgets it, and ``status.nominatedNodeName`` is patched away (when the pod or the
        nominator had one).

        Returns the refusals, one per pod whose patch failed (the nominator forgets it all the
        same); an empty list when every patch went through.
        """
        errors: list[Exception] = []
        for pod in pods:
            # The nominator first: the update the patch brings back must not find it there.
            held = ""
            if self.nominator is not None:
                held = self.nominator.node_of(pod)
                self.nominator.remove(pod)
            if not (pod.nominated_node_name or held):
                continue
            try:
                self.backend.patch_pod_status(pod, nominated_node_name="")
            except Exception as exc:
                errors.append(exc)
        return errors

    def activate(self, pods: Iterable[Pod]) -> None:
        """Retry ``pods`` at once (kube's ``Handle.Activate``): each one waiting in the
        unschedulable pool or in backoff moves to activeQ, through PreEnqueue (a pod it gates
        stays in the pool). A pod in its scheduling cycle is retried when that cycle fails,
        rather than wait in the pool for an event; a pod already in activeQ, or one the queue
        does not hold, is left alone. Does nothing on a handle built without an activator.
        """
        if self.activator is not None:
            self.activator(pods)

    def run_in_background(self, call: Callable[[], object], name: str = "background") -> None:
        """Run ``call`` apart from the scheduling cycle, as kube-scheduler starts a goroutine
        (asynchronous preemption sends its API calls so).

        On a thread of its own, unless :attr:`background` says otherwise or the backend is
        ``synchronous`` (the in-memory one: its calls take no time, and running them inline
        keeps ``simulate`` repeatable). An exception ``call`` lets out is logged.
        """
        if self.background is not None:
            self.background(call)
        elif self.backend.synchronous:
            _logged(call, name)
        else:
            threading.Thread(target=_logged, args=(call, name), name=name, daemon=True).start()


def _logged(call: Callable[[], object], name: str) -> None:
    try:
        call()
    except Exception:
        log.exception("%s failed", name)
