"""The framework runtime: one profile's plugins, run point by point in the profile's order.

pluggy validates every plugin against the hookspecs (a hookimpl with an argument the spec lacks
is refused at start-up); the calls themselves go plugin by plugin in the merged profile order, so
that order, per-plugin weights and per-plugin statuses never depend on pluggy's LIFO call order or
on install order (docs/design.md, "Calling plugins in profile order").
"""

from __future__ import annotations

import logging
import operator
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pluggy

from kubesched.api.objects import Pod
from kubesched.engine.metrics import STATUS_LABELS
from kubesched.engine.position_index import ScoreIndex
from kubesched.engine.reuse import PodSignature, ResultMemo, canonical
from kubesched.errors import ArgsError, FieldError, KubeschedError, PluginLoadError
from kubesched.framework import hookspecs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.handle import Handle
from kubesched.framework.helpers import MAX_NODE_SCORE, MIN_NODE_SCORE
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.registry import HookManager, Registry
from kubesched.framework.results import (
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod

if TYPE_CHECKING:
    from kubesched.config import Profile

__all__ = [
    "MAX_NODE_SCORE",
    "RUNNING_BINDING_PLUGIN",
    "CallObserver",
    "FilterReuse",
    "Framework",
    "NodeScores",
    "PluginCall",
    "ProfileBuildError",
]

log = logging.getLogger(__name__)


# -- plugin time limit of the binding cycle (scheduler.py): the (point, plugin) being run is
# recorded in the pod's CycleState, since binding cycles run in parallel --
RUNNING_BINDING_PLUGIN = "kubesched/running-binding-plugin"


class ProfileBuildError(KubeschedError):
    """Plugins of a profile that could not be built; ``errors`` carries their field paths."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))


@dataclass(frozen=True, slots=True)
class PluginCall:
    """One plugin's implementation of one hook, callable with the hook's full argument list."""

    plugin: str
    call: Callable[..., Any]
    weight: int = 1


#: ``observer(hook, plugin, args, outcome)``: told of one plugin call after it returned, with
#: what it returned, or the exception it raised (which goes on to the framework as before).
CallObserver = Callable[[str, str, tuple[Any, ...], Any], None]


def _observed_call(
    hook: str, plugin: str, call: Callable[..., Any], observer: CallObserver
) -> Callable[..., Any]:
    def observed(*args: Any) -> Any:
        try:
            result = call(*args)
        except Exception as exc:
            observer(hook, plugin, args, exc)
            raise
        observer(hook, plugin, args, result)
        return result

    return observed


class NodeScores:
    """A Score point's outcome: each plugin's weighted scores and each node's total, aligned
    with the nodes scored; :attr:`columns` built on first use when ``build`` is given (the
    totals alone decide the host), :attr:`by_plugin` as node-keyed dicts, likewise."""

    __slots__ = ("_build", "_by_plugin", "_columns", "names", "totals")

    def __init__(
        self,
        names: list[str],
        columns: dict[str, list[int]] | None,
        totals: list[int],
        build: Callable[[], dict[str, list[int]]] | None = None,
    ) -> None:
        self.names = names
        self._columns = columns
        self._build = build
        #: The weighted sum per node.
        self.totals = totals
        self._by_plugin: dict[str, dict[str, int]] | None = None

    @property
    def columns(self) -> dict[str, list[int]]:
        """plugin -> weighted score per node."""
        if self._columns is None:
            self._columns = self._build() if self._build is not None else {}
            self._build = None
        return self._columns

    @property
    def by_plugin(self) -> dict[str, dict[str, int]]:
        """plugin -> node -> weighted score."""
        if self._by_plugin is None:
            self._by_plugin = {
                plugin: dict(zip(self.names, column, strict=True))
                for plugin, column in self.columns.items()
            }
        return self._by_plugin


@dataclass(slots=True)
class FilterReuse:
    """A cycle's reusable Filter results: ``table`` (node name -> ``(generation, status)``, or
    ``(generation, (position, status))`` when some running Filters did not sign the pod), the
    running Filters that signed it and those that did not, each with its position in the
    running order; ``key`` names the table in the framework's memo."""

    table: dict[str, tuple[int, Any]]
    signed: list[tuple[int, PluginCall]]
    unsigned: list[tuple[int, PluginCall]]
    key: tuple[Any, ...] = ()

    @property
    def complete(self) -> bool:
        """Every running Filter signed the pod: the table holds the node's status itself."""
        return not self.unsigned


@dataclass(slots=True)
class _RawScores:
    """A cycle's raw Score results (see :meth:`Framework._raw_scores`)."""

    #: Per node: the raw scores of the calls that signed the pod (``signed`` gives each one's
    #: place in a row).
    rows: list[tuple[int, ...]]
    #: call index -> its place in a row.
    signed: dict[int, int]
    #: call index -> raw score per node, for the calls that did not sign the pod.
    columns: dict[int, list[int]]
    #: Per node: the weighted sum of the scores of the calls without a NormalizeScore.
    fixed: list[Any]
    #: One of those scores is outside [0, 100] (``fixed`` then means nothing).
    out_of_range: bool

    def column(self, k: int) -> list[int]:
        """Call ``k``'s raw score per node."""
        column = self.columns.get(k)
        if column is None:
            column = list(map(operator.itemgetter(self.signed[k]), self.rows))
        return column


_NAME = operator.attrgetter("name")
_ROW = operator.itemgetter(1)
_FIXED = operator.itemgetter(2)


def _fixed_sum(row: tuple[int, ...], weights: tuple[tuple[int, int], ...]) -> int | None:
    """The weighted sum of ``row``'s scores at the positions ``weights`` names (position,
    weight); ``None`` when one of them is outside [0, 100] (run_score then names it)."""
    total = 0
    for k, weight in weights:
        value = row[k]
        if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
            return None
        total += value * weight
    return total


class _ScoreFailed(Exception):
    """A Score plugin returned a failure Status (carried to ``run_score``)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _integer_score(value: Any, plugin: str, node: str, point: str) -> int:
    """``value`` as a node score: any integer (numpy's too) but a bool; anything else is an
    Error naming the plugin, never rounded or truncated (kube's scores are int64)."""
    if not isinstance(value, bool) and hasattr(type(value), "__index__"):
        return operator.index(value)
    raise _ScoreFailed(
        Status(
            Code.ERROR,
            f'{point} plugin "{plugin}" returned {type(value).__name__} {value!r} for node '
            f'"{node}"; a score must be an int in [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]',
            plugin=plugin,
        )
    )


def _adapt(
    function: Callable[..., Any], argnames: tuple[str, ...], spec_argnames: tuple[str, ...]
) -> Callable[..., Any]:
    """Call ``function`` with only the arguments it declares (pluggy's subset rule)."""
    if argnames == spec_argnames:
        return function
    picks = [spec_argnames.index(name) for name in argnames]
    return lambda *args: function(*[args[i] for i in picks])


#: The ``extension_point`` label of each hook's plugin calls in
#: ``scheduler_plugin_execution_duration_seconds`` (kube-scheduler's metrics constants).
_PLUGIN_METRIC_POINTS = {
    "pre_filter": "PreFilter",
    "filter": "Filter",
    "pre_filter_add_pod": "PreFilterExtensionAddPod",
    "pre_filter_remove_pod": "PreFilterExtensionRemovePod",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "score": "Score",
    "score_nodes": "Score",
    "normalize_score": "ScoreExtensionNormalize",
    "reserve": "Reserve",
    "unreserve": "Unreserve",
    "permit": "Permit",
    "pre_bind_pre_flight": "PreBindPreFlight",
    "pre_bind": "PreBind",
    "bind": "Bind",
    "post_bind": "PostBind",
}


def _result_code(result: Any) -> str:
    """The ``status`` label of what a plugin returned: its Status's code, else Success (a
    score, a PreFilterResult, ``None``); a PostFilter's ``(result, status)`` by its status."""
    if isinstance(result, Status):
        return STATUS_LABELS[result.code]
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Status):
        return STATUS_LABELS[result[1].code]
    return "Success"


def _timed(
    call: Callable[..., Any],
    plugin: str,
    point: str,
    observe: Callable[[str, str, str, float], None],
) -> Callable[..., Any]:
    """``call``, timed: ``observe(plugin, point, status, seconds)`` after each call (kube's
    ``ObservePluginDurationAsync``); a call that raises is observed as an Error."""

    def timed(*args: Any) -> Any:
        began = time.perf_counter()
        try:
            result = call(*args)
        except Exception:
            observe(plugin, point, "Error", time.perf_counter() - began)
            raise
        observe(plugin, point, _result_code(result), time.perf_counter() - began)
        return result

    return timed


def _as_error(status: Status, prefix: str, plugin: str) -> Status:
    """``status`` as an Error of ``plugin`` whose message is ``prefix`` + its own, keeping the
    exception it carries."""
    wrapped = Status(Code.ERROR, prefix + status.message(), plugin=plugin)
    wrapped.err = status.err
    return wrapped


class Framework:
    """Builds a profile's plugins and runs its extension points."""

    def __init__(self, profile: Profile, registry: Registry, handle: Handle) -> None:
        self.profile = profile
        self.name = profile.scheduler_name
        #: The handle the plugins get: the one given, with this runtime as its plugins runner.
        self.handle = handle.bound_to(self)
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self._manager = HookManager(hookspecs.PROJECT)
        self._manager.add_hookspecs(hookspecs)
        errors: list[FieldError] = []
        for name in profile.plugin_names():
            self._build_plugin(name, registry, errors)
        try:
            self._manager.check_pending()  # a hookimpl whose name matches no extension point
        except pluggy.PluginValidationError as exc:
            errors.append(FieldError(f"profiles[{getattr(profile, 'index', 0)}].plugins", str(exc)))
        if errors:
            raise ProfileBuildError(errors)
        self._calls: dict[str, list[PluginCall]] = {}
        for point, hook in hookspecs.EXTENSION_POINTS.items():
            self._calls[hook] = self._ordered_calls(
                hook, [(r.name, r.weight) for r in profile.plugins.get(point, [])]
            )
        score_order = [(c.plugin, c.weight) for c in self._calls["score"]]
        self._calls["normalize_score"] = self._ordered_calls("normalize_score", score_order)
        self._calls["score_nodes"] = self._ordered_calls("score_nodes", score_order)
        pre_filter_order = [(c.plugin, 1) for c in self._calls["pre_filter"]]
        for extension in ("pre_filter_add_pod", "pre_filter_remove_pod"):
            self._calls[extension] = self._ordered_calls(extension, pre_filter_order)
        reserve_order = [(c.plugin, 1) for c in self._calls["reserve"]]
        # Unreserve runs in reverse order of Reserve (kube-scheduler's rule).
        self._calls["unreserve"] = self._ordered_calls("unreserve", reserve_order[::-1])
        pre_bind_order = [(c.plugin, 1) for c in self._calls["pre_bind"]]
        self._calls["pre_bind_pre_flight"] = self._ordered_calls(
            "pre_bind_pre_flight", pre_bind_order
        )
        # A PreBind plugin without PreBindPreFlight may have work for any pod (kube's stubs
        # return Success): it always counts as Success.
        self._pre_bind_without_pre_flight = len(pre_bind_order) > len(
            self._calls["pre_bind_pre_flight"]
        )
        self._calls["events_to_register"] = self._ordered_calls(
            "events_to_register", [(name, 1) for name in self.plugins]
        )
        self._score_weights = {c.plugin: c.weight for c in self._calls["score"]}
        # Plugins whose results depend on the pod being scheduled: each must sign a pod for its
        # Filter or Score results to be reused for the next pod like it (signature.py).
        candidates = list(
            dict.fromkeys(
                c.plugin
                for hook in ("pre_filter", "filter", "pre_score", "score")
                for c in self._calls[hook]
            )
        )
        self._calls["sign_pod"] = self._ordered_calls("sign_pod", [(n, 1) for n in candidates])
        signers = {c.plugin for c in self._calls["sign_pod"]}
        self._never_signed = frozenset(n for n in candidates if n not in signers)
        #: Reuse Filter/Score results across pods with the same signature (off: always call).
        self.reuse_results = True
        self.memo = ResultMemo()
        # The scheduling-cycle point and plugin call being run (read only when a call overruns
        # the scheduler's plugin time limit, to name the culprit).
        self._point = ""
        self._current: PluginCall | None = None
        #: The calls of cycles whose CycleState has ``record_plugin_metrics`` (timed once
        #: :meth:`record_plugin_durations` is called; the plain calls until then).
        self._sampled_calls: dict[str, list[PluginCall]] = self._calls
        self._plugin_room: Callable[[], bool] = lambda: False  # nothing records until then

    def record_plugin_durations(
        self, observe: Callable[[str, str, str, float], None], has_room: Callable[[], bool]
    ) -> None:
        """Time each plugin call of the cycles whose state has ``record_plugin_metrics``:
        ``observe(plugin, extension_point, status, seconds)``, kube-scheduler's
        ``scheduler_plugin_execution_duration_seconds``. Other cycles pay nothing, and neither
        does a point run while ``has_room()`` is False (the observations would be dropped, as
        kube drops what its full buffer cannot take; here the timing is saved too)."""
        self._sampled_calls = {
            hook: [
                PluginCall(
                    c.plugin,
                    _timed(c.call, c.plugin, _PLUGIN_METRIC_POINTS[hook], observe),
                    c.weight,
                )
                if hook in _PLUGIN_METRIC_POINTS
                else c
                for c in calls
            ]
            for hook, calls in self._calls.items()
        }
        self._plugin_room = has_room

    def _calls_of(self, state: CycleState) -> dict[str, list[PluginCall]]:
        """The plugin calls for ``state``'s cycle: timed in a sampled cycle."""
        if state.record_plugin_metrics and self._plugin_room():
            return self._sampled_calls
        return self._calls

    # -- construction --------------------------------------------------------------------------
    def _build_plugin(self, name: str, registry: Registry, errors: list[FieldError]) -> None:
        index = getattr(self.profile, "index", 0)
        args_path = self.profile.args_paths.get(
            name, f"profiles[{index}].pluginConfig[{name}].args"
        )
        spec = registry.get(name)
        try:
            cls = spec.load()
            plugin = cls(dict(self.profile.plugin_args.get(name, {})), self.handle)
        except ArgsError as exc:
            errors.extend(error.under(args_path) for error in exc.errors)
            return
        except PluginLoadError as exc:
            errors.append(FieldError(f"profiles[{index}].plugins", str(exc)))
            return
        except (Exception, SystemExit) as exc:  # a broken factory is reported, not raised
            errors.append(
                FieldError(
                    args_path,
                    f'plugin "{name}" ({spec.distribution or spec.target}'
                    f"{' ' + spec.version if spec.version else ''}) failed to "
                    f"start: {type(exc).__name__}: {exc}",
                )
            )
            return
        try:
            self._manager.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            errors.append(FieldError(f"profiles[{index}].plugins", f'plugin "{name}": {exc}'))
            return
        self.plugins[name] = plugin

    def _ordered_calls(self, hook: str, order: list[tuple[str, int]]) -> list[PluginCall]:
        caller = getattr(self._manager.hook, hook)
        spec_argnames = tuple(caller.spec.argnames)
        impls = {impl.plugin_name: impl for impl in caller.get_hookimpls()}
        calls = []
        for name, weight in order:
            impl = impls.get(name)
            if impl is not None:
                calls.append(
                    PluginCall(
                        name,
                        _adapt(impl.function, tuple(impl.argnames), spec_argnames),
                        weight or 1,
                    )
                )
        return calls

    def observe_calls(self, observer: CallObserver, hooks: Iterable[str]) -> None:
        """Tell ``observer`` of every plugin call at ``hooks`` (hookspec names) from now on.

        The calls are the same, in the profile's order with the same early stops; each is
        followed by one ``observer(hook, plugin, args, outcome)``. Result reuse is turned off,
        so that no call is answered from an earlier pod's results unseen. ``kubesched explain``
        records with it; it costs one Python call per plugin call, so the scheduler's hot path
        (time limits, metrics) does not use it.
        """
        self.reuse_results = False
        for hook in hooks:
            self._calls[hook] = [
                PluginCall(c.plugin, _observed_call(hook, c.plugin, c.call, observer), c.weight)
                for c in self._calls[hook]
            ]

    def running(self) -> tuple[str, str]:
        """The extension point and plugin of the scheduling cycle running now (or last)."""
        current = self._current
        return self._point or "?", current.plugin if current is not None else "?"

    def plugins_at(self, point: str) -> list[str]:
        """The plugin names that run at ``point`` (a profile field name), in order."""
        return [c.plugin for c in self._calls[hookspecs.EXTENSION_POINTS[point]]]

    def score_weight(self, plugin: str) -> int:
        return self._score_weights[plugin]

    def has_score_plugins(self) -> bool:
        return bool(self._calls["score"])

    def has_filter_plugins(self) -> bool:
        return bool(self._calls["filter"])

    # -- running plugins -----------------------------------------------------------------------
    @staticmethod
    def _status(result: Any, plugin: str, point: str) -> Status:
        if result is None:
            return Status(Code.SUCCESS, plugin=plugin)
        if isinstance(result, Status):
            return result.with_plugin(plugin)
        return Status(
            Code.ERROR,
            f'{point} plugin "{plugin}" returned {type(result).__name__}, '
            "expected a Status or None",
            plugin=plugin,
        )

    @staticmethod
    def _crash(point: str, plugin: str, exc: Exception) -> Status:
        log.error('%s plugin "%s" raised', point, plugin, exc_info=exc)
        status = Status(
            Code.ERROR,
            f'running {point} plugin "{plugin}": {type(exc).__name__}: {exc}',
            plugin=plugin,
        )
        status.err = exc
        return status

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Each plugin's registered events (plugins that raise here are logged, not fatal)."""
        events: dict[str, list[ClusterEventWithHint]] = {}
        for c in self._calls["events_to_register"]:
            try:
                events[c.plugin] = list(c.call() or ())
            except Exception as exc:
                self._crash("EventsToRegister", c.plugin, exc)
        return events

    def sign_pod(self, pod: Pod) -> PodSignature | None:
        """The pod's signature over the plugins that can sign it; ``None`` when results are not
        reused at all (``reuse_results`` off)."""
        if not self.reuse_results:
            return None
        fragments: dict[str, str] = {}
        unsigned = set(self._never_signed)
        for c in self._calls["sign_pod"]:
            try:
                fragment = c.call(pod)
            except Exception as exc:
                self._crash("SignPod", c.plugin, exc)
                unsigned.add(c.plugin)
                continue
            if isinstance(fragment, Status):
                if not fragment.is_success():
                    unsigned.add(c.plugin)
                continue
            if fragment is not None:
                text = canonical(fragment)
                if text is None:  # not JSON data: sign nothing
                    every = frozenset(c.plugin for c in self._calls["sign_pod"])
                    return PodSignature("", every | unsigned)
                fragments[c.plugin] = text
        key = "\x00".join([self.name, *(f"{p}\x01{t}" for p, t in fragments.items())])
        return PodSignature(key, frozenset(unsigned), fragments)

    def filter_reuse(self, state: CycleState) -> FilterReuse | None:
        """How this cycle's Filter results may be reused (signature.py), or ``None`` when no
        running Filter signed the pod."""
        signature = state.signature
        if signature is None:
            return None
        skip = state.skip_filter_plugins
        running = [c for c in self._calls_of(state)["filter"] if c.plugin not in skip]
        signed = [(i, c) for i, c in enumerate(running) if c.plugin not in signature.unsigned]
        if not signed:
            return None
        unsigned = [(i, c) for i, c in enumerate(running) if c.plugin in signature.unsigned]
        plugins = tuple(c.plugin for _, c in signed)
        key = ("filter" if not unsigned else "filter-part", signature.key_for(plugins), plugins)
        return FilterReuse(self.memo.table(key), signed, unsigned, key)

    def filter_results_reusable(self, state: CycleState) -> bool:
        """Whether every running Filter plugin signed ``state``'s pod (``PluginsRunner``)."""
        reuse = self.filter_reuse(state)
        return reuse is not None and reuse.complete

    def run_filter_reusing(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, reuse: FilterReuse
    ) -> Status | None:
        """:meth:`run_filter` for a pod some running Filters did not sign: the signed ones'
        first rejection comes from the table while the node is unchanged; the others run, up
        to that rejection, so the first rejection in profile order is the answer either way."""
        table = reuse.table
        entry = table.get(node_info.name)
        if entry is not None and entry[0] == node_info.generation:
            first, status = entry[1]
        else:
            first, status = self._first_rejection(reuse.signed, state, pod, node_info)
            if status is not None and status.code is Code.ERROR:
                return status
            table[node_info.name] = (node_info.generation, (first, status))
        if reuse.unsigned:
            _, rejection = self._first_rejection(
                [(i, c) for i, c in reuse.unsigned if i < first], state, pod, node_info
            )
            if rejection is not None:
                return rejection
        return status

    def partial_filter(
        self, state: CycleState, pod: Pod, reuse: FilterReuse
    ) -> Callable[[CycleState, Pod, NodeInfo], Status | None]:
        """:meth:`run_filter_reusing` for one cycle, as one function per node: what the cycle
        fixes (the table, the unsigned calls in running order) is bound once, so a node costs
        a table look-up and the unsigned Filters up to the signed ones' first rejection.

        The same answers as :meth:`run_filter_reusing`, node for node; the Filter loop visits
        hundreds of nodes per pod with it, so the per-node overhead is kept to plain locals
        (measured in docs/benchmarks.md, "Later on 2026-12-02")."""
        table = reuse.table
        lookup = table.get
        signed = reuse.signed
        unsigned = [(position, c, c.call) for position, c in reuse.unsigned]
        first_rejection = self._first_rejection
        status_of = self._status
        crash = self._crash
        success = Code.SUCCESS

        def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            name = node_info.name
            entry = lookup(name)
            if entry is not None and entry[0] == node_info.generation:
                first, status = entry[1]
            else:
                first, status = first_rejection(signed, state, pod, node_info)
                if status is not None and status.code is Code.ERROR:
                    return status
                table[name] = (node_info.generation, (first, status))
            self._point = "Filter"
            for position, c, call in unsigned:
                if position >= first:
                    break
                self._current = c
                try:
                    result = call(state, pod, node_info)
                except Exception as exc:
                    return crash("Filter", c.plugin, exc)
                if result is None:
                    continue
                if type(result) is Status:  # _status inlined: most nodes a plugin rejects
                    if not result.plugin:
                        result.plugin = c.plugin
                    if result.code is not success:
                        return result
                    continue
                rejection = status_of(result, c.plugin, "Filter")
                if not rejection.is_success():
                    return rejection
            return status

        return run

    def _first_rejection(
        self,
        calls: list[tuple[int, PluginCall]],
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
    ) -> tuple[int, Status | None]:
        """The position and status of the first of ``calls`` that does not pass (an Error
        included); ``(sys.maxsize, None)`` when all pass."""
        self._point = "Filter"
        for position, c in calls:
            self._current = c
            try:
                result = c.call(state, pod, node_info)
            except Exception as exc:
                return position, self._crash("Filter", c.plugin, exc)
            if result is None:
                continue
            status = self._status(result, c.plugin, "Filter")
            if not status.is_success():
                return position, status
        return sys.maxsize, None

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for c in self._calls["pre_enqueue"]:
            try:
                status = self._status(c.call(pod), c.plugin, "PreEnqueue")
            except Exception as exc:
                status = self._crash("PreEnqueue", c.plugin, exc)
            if not status.is_success():
                return status
        return Status.success()

    def pre_enqueue_still_gates(self, plugin: str, pod: Pod) -> bool:
        """Whether ``plugin``'s PreEnqueue still refuses ``pod`` (False when the plugin is not
        at PreEnqueue or raises: the whole chain then decides). The queue asks this of a gated
        pod's gating plugin before anything else an event would cost: while it refuses, the
        pod cannot leave the pool whatever the other plugins say."""
        for c in self._calls["pre_enqueue"]:
            if c.plugin != plugin:
                continue
            try:
                status = self._status(c.call(pod), c.plugin, "PreEnqueue")
            except Exception:
                return False
            return not status.is_success()
        return False

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        calls = self._calls["queue_sort_less"]
        if not calls:  # no QueueSort plugin: first come, first served
            return a.timestamp < b.timestamp
        return bool(calls[0].call(a, b))

    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, list[str]]:
        """The merged node subset, the first rejection (or Success) and the plugins that
        narrowed the node set."""
        merged: PreFilterResult | None = None
        narrowing: list[str] = []
        self._point = "PreFilter"
        for c in self._calls_of(state)["pre_filter"]:
            self._current = c
            try:
                result = c.call(state, pod, nodes)
            except Exception as exc:
                return None, self._crash("PreFilter", c.plugin, exc), narrowing
            if isinstance(result, PreFilterResult):
                if not result.all_nodes():
                    narrowing.append(c.plugin)
                merged = result if merged is None else merged.merge(result)
                if merged.node_names is not None and not merged.node_names:
                    message = (
                        f"node(s) didn't satisfy plugin {narrowing[0]}"
                        if len(narrowing) == 1
                        else f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] "
                        "simultaneously"
                    )
                    return (
                        merged,
                        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message, plugin=c.plugin),
                        narrowing,
                    )
                continue
            status = self._status(result, c.plugin, "PreFilter")
            if status.is_skip():
                state.skip_filter_plugins.add(c.plugin)
            elif not status.is_success():
                return None, status, narrowing
        return merged, Status.success(), narrowing

    def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """``None`` when every Filter passes, else the first non-success (with its plugin)."""
        skip = state.skip_filter_plugins
        self._point = "Filter"
        sampled = state.record_plugin_metrics and self._plugin_room()
        for c in (self._sampled_calls if sampled else self._calls)["filter"]:
            if skip and c.plugin in skip:
                continue
            self._current = c
            try:
                result = c.call(state, pod, node_info)
            except Exception as exc:
                return self._crash("Filter", c.plugin, exc)
            if result is None:
                continue
            status = self._status(result, c.plugin, "Filter")
            if not status.is_success():
                return status
        return None

    def _run_pre_filter_extension(
        self, hook: str, point: str, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo
    ) -> Status:
        for c in self._calls_of(state)[hook]:
            if c.plugin in state.skip_filter_plugins:
                continue
            try:
                status = self._status(c.call(state, pod, other, node_info), c.plugin, point)
            except Exception as exc:
                status = self._crash(point, c.plugin, exc)
            if not status.is_success():
                # kube's wording; any failure here is an Error (the what-if cannot go on).
                return _as_error(
                    status, f'running {point} on PreFilter plugin "{c.plugin}": ', c.plugin
                )
        return Status.success()

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's state updated as if ``pod_to_add`` ran on the node."""
        return self._run_pre_filter_extension(
            "pre_filter_add_pod", "AddPod", state, pod, pod_to_add, node_info
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's state updated as if ``pod_to_remove`` were gone."""
        return self._run_pre_filter_extension(
            "pre_filter_remove_pod", "RemovePod", state, pod, pod_to_remove, node_info
        )

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filter, respecting pods nominated to this node with at least the pod's priority.

        As kube-scheduler does: if such pods exist, the filters must pass both with them added
        (they will take their room) and without them (they may not come, and inter-pod
        affinity must not depend on them).
        """
        nominated = [
            other
            for other in self.handle.nominated_pods_for_node(node_info.name)
            if other.uid != pod.uid and other.priority >= pod.priority
        ]
        if not nominated:
            return self.run_filter(state, pod, node_info)
        state_with = state.clone()
        info_with = node_info.clone()
        for other in nominated:
            info_with.add_pod(other)
            status = self.run_pre_filter_extension_add_pod(state_with, pod, other, info_with)
            if not status.is_success():
                return status
        rejected = self.run_filter(state_with, pod, info_with)
        if rejected is not None:
            return rejected
        return self.run_filter(state, pod, node_info)

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """kube's ``RunPostFilterPlugins``: the first Success wins; UnschedulableAndUnresolvable or
        an Error ends the point; otherwise every plugin's reasons, with the last result a plugin
        returned alongside its rejection (e.g. ``PostFilterResult("")``: clear the nomination)."""
        reasons: list[str] = []
        kept: PostFilterResult | None = None
        rejector = ""
        self._point = "PostFilter"
        for c in self._calls_of(state)["post_filter"]:
            self._current = c
            try:
                result, status = self._post_filter_outcome(c.call(state, pod, statuses), c.plugin)
            except Exception as exc:
                return None, self._crash("PostFilter", c.plugin, exc)
            if status.is_success():
                return result or PostFilterResult(), status
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status
            if not status.is_rejected():
                return None, status
            if result is not None:
                kept = result
            reasons.extend(status.reasons)
            rejector = rejector or c.plugin
        return kept, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    def _post_filter_outcome(
        self, returned: Any, plugin: str
    ) -> tuple[PostFilterResult | None, Status]:
        """A PostFilter's return as kube's pair: a result alone is a Success, ``None`` a
        rejection without reasons, a ``(result, status)`` pair as it is."""
        if isinstance(returned, PostFilterResult):
            return returned, Status(Code.SUCCESS, plugin=plugin)
        if returned is None:
            return None, Status(Code.UNSCHEDULABLE, plugin=plugin)
        if isinstance(returned, tuple) and len(returned) == 2:
            result, status = returned
            if result is None or isinstance(result, PostFilterResult):
                return result, self._status(status, plugin, "PostFilter")
        return None, self._status(returned, plugin, "PostFilter")

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        self._point = "PreScore"
        for c in self._calls_of(state)["pre_score"]:
            self._current = c
            try:
                status = self._status(c.call(state, pod, nodes), c.plugin, "PreScore")
            except Exception as exc:
                return self._crash("PreScore", c.plugin, exc)
            if status.is_skip():
                state.skip_score_plugins.add(c.plugin)
            elif not status.is_success():
                return status
        return Status.success()

    def run_score(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[NodeScores, Status]:
        """Per plugin, per node: the normalized score times the plugin's weight, and each node's
        total (aligned with ``nodes``).

        kube's RunScorePlugins in its order: every Score call, then every NormalizeScore, then
        the weights and the [0, 100] check. Raw scores come from the signature's table where the
        node is unchanged (``filter_results`` explains when), each row with the weighted sum of
        its plugins that have no NormalizeScore, so that per cycle only the normalized columns
        and the totals are built; NormalizeScore always runs over this cycle's nodes.
        """
        skip = state.skip_score_plugins
        all_calls = self._calls_of(state)
        calls = [c for c in all_calls["score"] if c.plugin not in skip]
        self._point = "Score"
        if not calls:
            return NodeScores([info.name for info in nodes], {}, [0] * len(nodes)), (
                Status.success()
            )
        names = list(map(_NAME, nodes))
        normalizers = {c.plugin: c for c in all_calls["normalize_score"]}
        fixed_weights = tuple(
            (k, c.weight) for k, c in enumerate(calls) if c.plugin not in normalizers
        )
        try:
            raw = self._raw_scores(calls, fixed_weights, state, pod, nodes)
        except _ScoreFailed as failed:
            return NodeScores(names, {}, []), failed.status
        except Exception as exc:
            plugin = self._current.plugin if self._current is not None else "?"
            return NodeScores(names, {}, []), self._crash("Score", plugin, exc)
        normalized: dict[str, list[int]] = {}
        for k, c in enumerate(calls):
            normalizer = normalizers.get(c.plugin)
            if normalizer is None:
                continue
            self._current = normalizer
            scores = dict(zip(names, raw.column(k), strict=True))
            try:
                status = self._status(
                    normalizer.call(state, pod, scores), c.plugin, "NormalizeScore"
                )
            except Exception as exc:
                return NodeScores(names, normalized, []), self._crash("Score", c.plugin, exc)
            if not status.is_success():
                return NodeScores(names, normalized, []), status
            column = list(map(scores.__getitem__, names))
            if not {int}.issuperset(map(type, column)):
                try:
                    column = [
                        v if type(v) is int else _integer_score(v, c.plugin, n, "NormalizeScore")
                        for n, v in zip(names, column, strict=True)
                    ]
                except _ScoreFailed as failed:
                    return NodeScores(names, normalized, []), failed.status
            normalized[c.plugin] = column
        for k, c in enumerate(calls):
            if c.plugin in normalized:
                column = normalized[c.plugin]
            elif raw.out_of_range:  # a plugin without NormalizeScore gave one
                column = raw.column(k)
            else:
                continue
            if column and not (MIN_NODE_SCORE <= min(column) and max(column) <= MAX_NODE_SCORE):
                value = next(v for v in column if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
                # kube's RunScorePlugins wording, word for word.
                return NodeScores(names, normalized, []), Status(
                    Code.ERROR,
                    f'applying score defaultWeights on Score plugins: plugin "{c.plugin}" '
                    f"returns an invalid score {value}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    plugin=c.plugin,
                )
        # Weighting and summing are C-level maps: they run over every scored node per cycle.
        totals = cast("list[int]", raw.fixed)
        for c in calls:
            plugin_scores = normalized.get(c.plugin)
            if plugin_scores is None:
                continue
            if c.weight != 1:
                plugin_scores = normalized[c.plugin] = list(map(c.weight.__mul__, plugin_scores))
            totals = list(map(operator.add, totals, plugin_scores))

        def columns() -> dict[str, list[int]]:
            built: dict[str, list[int]] = {}
            for k, c in enumerate(calls):
                column = normalized.get(c.plugin)
                if column is None:
                    weight = c.weight
                    column = [value * weight for value in raw.column(k)]
                built[c.plugin] = column
            return built

        return NodeScores(names, None, totals, build=columns), Status.success()

    def _raw_scores(
        self,
        calls: list[PluginCall],
        fixed_weights: tuple[tuple[int, int], ...],
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
    ) -> _RawScores:
        """Every call's raw scores over ``nodes``, and per node the weighted sum of the calls
        ``fixed_weights`` names (position, weight: those without a NormalizeScore).

        The calls that signed the pod come from the signature's table for a node unchanged
        since it was filled: one row per node, with its part of that sum (range-checked when
        filled). The others are called for every node, one column per call."""
        signature = state.signature
        signed = [
            k
            for k, c in enumerate(calls)
            if signature is not None and c.plugin not in signature.unsigned
        ]
        positions = {k: i for i, k in enumerate(signed)}
        score_one = self._score_one
        fixed_at = dict(fixed_weights)
        rows: list[tuple[int, ...]] = []
        fixed: list[Any]
        if signed:
            assert signature is not None
            signed_calls = [calls[k] for k in signed]
            signed_weights = tuple((i, fixed_at[k]) for i, k in enumerate(signed) if k in fixed_at)
            # node name -> (generation, row, its weighted sum or None)
            plugins = tuple(c.plugin for c in signed_calls)
            key = ("score", signature.key_for(plugins), plugins)
            found = state.found
            table: dict[str, Any]
            if found is not None and found.nodes is nodes:
                # The Filter step found these nodes by position: take the entries kept at
                # those positions, looking up only the ones replaced since.
                index = self.memo.index(key, ScoreIndex)
                table = index.table
                index.catch_up(found.journal)
                kept = index.entries
                entries: list[Any] = list(map(kept.__getitem__, found.positions))
                missing: Sequence[int] = [i for i, entry in enumerate(entries) if entry is None]
            else:
                table, kept = cast("dict[str, Any]", self.memo.table(key)), None
                entries = [None] * len(nodes)
                missing = range(len(nodes))
            for i in missing:
                info = nodes[i]
                entry: Any = table.get(info.name)
                if entry is None or entry[0] != info.generation:
                    row = tuple([score_one(c, state, pod, info) for c in signed_calls])
                    entry = table[info.name] = (
                        info.generation,
                        row,
                        _fixed_sum(row, signed_weights),
                    )
                entries[i] = entry
                if kept is not None:
                    kept[found.positions[i]] = entry  # type: ignore[union-attr]
            rows = list(map(_ROW, entries))
            fixed = list(map(_FIXED, entries))
            out_of_range = None in fixed
        else:
            fixed = [0] * len(nodes)
            out_of_range = False
        columns: dict[int, list[int]] = {}
        whole = self._whole_column_calls(state)
        for k, c in enumerate(calls):
            if k in positions:
                continue
            batch = whole.get(c.plugin)
            if batch is not None:
                column = columns[k] = self._score_column(batch, state, pod, nodes)
            else:
                column = columns[k] = [score_one(c, state, pod, info) for info in nodes]
            weight = fixed_at.get(k)
            if weight is None or out_of_range or not column:
                continue
            if not (MIN_NODE_SCORE <= min(column) and max(column) <= MAX_NODE_SCORE):
                out_of_range = True
            else:
                fixed = [f + v * weight for f, v in zip(fixed, column, strict=True)]
        return _RawScores(rows, positions, columns, fixed, out_of_range)

    def _whole_column_calls(self, state: CycleState) -> dict[str, PluginCall]:
        """plugin -> its ``score_nodes`` call, for this cycle; none while results are not reused
        (``kubesched explain`` then sees every node's own Score call)."""
        if not self.reuse_results:
            return {}
        return {c.plugin: c for c in self._calls_of(state)["score_nodes"]}

    def _score_column(
        self, c: PluginCall, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[int]:
        """One ``score_nodes`` call: a score per node, checked as :meth:`_score_one` checks
        one; a list of the wrong length is the plugin's Error."""
        self._current = c
        values = c.call(state, pod, nodes)
        if isinstance(values, Status):
            if values.is_success():
                return [0] * len(nodes)
            raise _ScoreFailed(values.with_plugin(c.plugin))
        try:
            column = list(values)
        except TypeError:
            column = None
        if column is None or len(column) != len(nodes):
            what = f"{len(column)} scores" if column is not None else type(values).__name__
            raise _ScoreFailed(
                Status(
                    Code.ERROR,
                    f'score_nodes of plugin "{c.plugin}" returned {what} for {len(nodes)} '
                    "nodes; it must return one int per node, in the nodes' order",
                    plugin=c.plugin,
                )
            )
        if not {int}.issuperset(map(type, column)):
            column = [
                v if type(v) is int else _integer_score(v, c.plugin, info.name, "Score")
                for v, info in zip(column, nodes, strict=True)
            ]
        return column

    def _score_one(self, c: PluginCall, state: CycleState, pod: Pod, info: NodeInfo) -> int:
        self._current = c
        value = c.call(state, pod, info)
        if type(value) is int:
            return value
        if isinstance(value, Status):
            if value.is_success():
                return 0
            raise _ScoreFailed(value.with_plugin(c.plugin))
        return _integer_score(value, c.plugin, info.name, "Score")

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._point = "Reserve"
        for c in self._calls_of(state)["reserve"]:
            self._current = c
            try:
                status = self._status(c.call(state, pod, node_name), c.plugin, "Reserve")
            except Exception as exc:
                return self._crash("Reserve", c.plugin, exc)
            if not status.is_success():
                return status
        return Status.success()

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for c in self._calls_of(state)["unreserve"]:
            try:
                c.call(state, pod, node_name)
            except Exception as exc:
                self._crash("Unreserve", c.plugin, exc)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, a rejection, or Wait (the pod is then registered as waiting)."""
        waits: dict[str, float] = {}
        self._point = "Permit"
        for c in self._calls_of(state)["permit"]:
            self._current = c
            try:
                status = self._status(c.call(state, pod, node_name), c.plugin, "Permit")
            except Exception as exc:
                return self._crash("Permit", c.plugin, exc)
            if status.is_wait():
                waits[c.plugin] = status.timeout if status.timeout is not None else 0.0
            elif not status.is_success():
                return status
        if waits:
            waiting_pods = self.handle.waiting_pods
            waiting_pods.add(WaitingPod(pod, node_name, waits, waiting_pods.clock))
            return Status(Code.WAIT, f"one or more plugins asked to wait: {sorted(waits)}")
        return Status.success()

    def wait_on_permit(self, pod: Pod) -> Status:
        waiting = self.handle.waiting_pods.get(pod.uid)
        if waiting is None:
            return Status.success()
        try:
            return waiting.wait()
        finally:
            self.handle.waiting_pods.remove(pod.uid)

    def _run_binding_point(
        self, hook: str, point: str, state: CycleState, pod: Pod, node_name: str
    ) -> Status:
        for c in self._calls_of(state)[hook]:
            state.write(RUNNING_BINDING_PLUGIN, (point, c.plugin))
            try:
                status = self._status(c.call(state, pod, node_name), c.plugin, point)
            except Exception as exc:
                return self._crash(point, c.plugin, exc)
            if hook == "bind":
                if status.is_skip():
                    continue
                return status
            if not status.is_success():
                return status
        if hook == "bind":
            return Status(Code.ERROR, "no Bind plugin bound the pod (every one returned Skip)")
        return Status.success()

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """kube's ``RunPreBindPreFlights``: Success when some PreBind plugin will have work for
        the pod, Skip when none will, an Error when one failed (or answered anything but
        Success, Skip or Error). Records the plugins that answered Skip, whose PreBind
        :meth:`run_pre_bind` then leaves out."""
        outcome = Status.success() if self._pre_bind_without_pre_flight else Status.skip()
        skipped: set[str] = set()
        for c in self._calls_of(state)["pre_bind_pre_flight"]:
            state.write(RUNNING_BINDING_PLUGIN, ("PreBindPreFlight", c.plugin))
            try:
                status = self._status(c.call(state, pod, node_name), c.plugin, "PreBindPreFlight")
            except Exception as exc:
                return self._crash("PreBindPreFlight", c.plugin, exc)
            if status.is_skip():
                skipped.add(c.plugin)
            elif status.is_success():
                outcome = Status.success()
            elif status.code == Code.ERROR:
                return _as_error(status, f'running PreBindPreFlight "{c.plugin}": ', c.plugin)
            else:
                return Status(
                    Code.ERROR,
                    f'PreBindPreFlight "{c.plugin}" returned {STATUS_LABELS[status.code]!r}, '
                    "which is unsupported. It is supposed to return Success, Skip, or Error "
                    "status",
                    plugin=c.plugin,
                )
        state.skip_pre_bind_plugins = skipped
        return outcome

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The PreBind plugins in order, but those whose PreBindPreFlight returned Skip."""
        skipped = state.skip_pre_bind_plugins
        for c in self._calls_of(state)["pre_bind"]:
            if c.plugin in skipped:
                continue
            state.write(RUNNING_BINDING_PLUGIN, ("PreBind", c.plugin))
            try:
                status = self._status(c.call(state, pod, node_name), c.plugin, "PreBind")
            except Exception as exc:
                return self._crash("PreBind", c.plugin, exc)
            if not status.is_success():
                return status
        return Status.success()

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._run_binding_point("bind", "Bind", state, pod, node_name)

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for c in self._calls_of(state)["post_bind"]:
            state.write(RUNNING_BINDING_PLUGIN, ("PostBind", c.plugin))
            try:
                c.call(state, pod, node_name)
            except Exception as exc:
                self._crash("PostBind", c.plugin, exc)

    def describe(self) -> Mapping[str, list[tuple[str, int]]]:
        """Every extension point's plugins in order, with score weights (``config show``)."""
        return {
            point: [(c.plugin, c.weight) for c in self._calls[hook]]
            for point, hook in hookspecs.EXTENSION_POINTS.items()
        }
