"""Races around the Bind: the pod deleted or bound by someone else between decision and bind, the
chosen node deleted, and a Bind that fails, is slow, gets no answer or loses its answer. Injected
by the fault proxy between ``kubesched run`` and the apiserver; every schedulable pod must end
bound exactly once and none may be lost."""

from __future__ import annotations

import json
import re
import time

from faultproxy import BINDING, Fault
from reliability_support import (
    PODS,
    check_exactly_once,
    pod_condition,
    successful_binds,
    wait_for,
)

BIND = BINDING.pattern


def pods_bind(names_regex: str) -> str:
    """The Binding path of the pods whose names match ``names_regex``."""
    return rf"^/api/v1/namespaces/[^/]+/pods/({names_regex})/binding$"


def _start(scenario, proxy):
    scenario.add_nodes(3)
    proc = scenario.start_kubesched(proxy.kubeconfig(scenario.tmp_path / "proxy.kubeconfig"))
    proc.wait_ready()
    return proc


def test_pod_deleted_between_decision_and_bind(scenario, proxy, figure):
    """Every tenth pod is deleted just before its Binding reaches the apiserver: the bind fails
    (404), the pod is dropped without retries, and the others are bound exactly once."""
    core = scenario.core

    def delete(match: re.Match[str], _body: bytes | None) -> None:
        core.delete_namespaced_pod(match.group(1), scenario.namespace, grace_period_seconds=0)

    proxy.add(Fault("before", pods_bind(r"p\d*7"), method="POST", hook=delete))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    victims = {n for n in names if n.endswith("7")}
    began = time.monotonic()
    scenario.create_pods(names)
    schedulable = [n for n in names if n not in victims]
    scenario.wait_bound(schedulable, 60)
    time.sleep(2)  # room for any retry of a deleted pod to show up
    binds = proxy.bindings(scenario.namespace)
    statuses = sorted({r.upstream for v in victims for r in binds.get(v, [])})
    assert statuses == [404], statuses
    retries = {v: len(binds[v]) for v in victims if len(binds.get(v, [])) > 1}
    assert not retries, f"deleted pods were bound again: {retries}"
    assert not set(scenario.pod_nodes()) & victims
    assert proc.proc.poll() is None
    figure.scenario = "pod deleted before its bind"
    figure.injected = f"{len(victims)} pods deleted by another client just before their Binding"
    figure.checked = "their bind answered 404 once, never retried; the rest bound exactly once"
    figure.notes["deleted"] = len(victims)
    check_exactly_once(scenario, proxy, schedulable, figure, fault_ended=began)


def test_pod_bound_by_someone_else_first(scenario, proxy, figure):
    """Every tenth pod is bound by another client to another node just before our Binding: ours
    is refused (409) and the pod stays where the other put it."""
    core = scenario.core
    elsewhere: dict[str, str] = {}

    def bind_first(match: re.Match[str], body: bytes | None) -> None:
        ours = json.loads(body or b"{}")["target"]["name"]
        other = next(n for n in scenario.node_names if n != ours)
        elsewhere[match.group(1)] = other
        core.create_namespaced_binding(
            scenario.namespace,
            {
                "metadata": {"name": match.group(1)},
                "target": {"apiVersion": "v1", "kind": "Node", "name": other},
            },
            _preload_content=False,
        )

    proxy.add(Fault("before", pods_bind(r"p\d*3"), method="POST", hook=bind_first))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    taken = {n for n in names if n.endswith("3")}
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(names, 60)
    time.sleep(2)
    nodes = scenario.pod_nodes()
    assert {n: nodes[n] for n in taken} == {n: elsewhere[n] for n in taken}
    binds = proxy.bindings(scenario.namespace)
    assert sorted({r.upstream for t in taken for r in binds[t]}) == [409]
    assert proc.proc.poll() is None
    figure.scenario = "pod bound by someone else"
    figure.injected = f"{len(taken)} pods bound by another client to another node just before ours"
    figure.checked = "ours refused (409), theirs kept; the rest bound exactly once"
    figure.notes["taken"] = len(taken)
    figure.notes["our_attempts_on_taken"] = sum(len(binds[t]) for t in taken)
    check_exactly_once(scenario, proxy, names, figure, fault_ended=began, bound_by_others=taken)


def test_node_deleted_during_a_cycle(scenario, proxy, figure):
    """The node a pod was just placed on is deleted before the Binding arrives. The apiserver
    does not check the node of a Binding, so that pod lands on the deleted node (as with
    kube-scheduler; the pod GC controller removes such pods); no later pod may go there."""
    core = scenario.core
    deleted: dict[str, float] = {}

    def delete_node(_match: re.Match[str], body: bytes | None) -> None:
        node = json.loads(body or b"{}")["target"]["name"]
        core.delete_node(node)
        deleted[node] = time.monotonic()

    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    first, second = names[: PODS // 2], names[PODS // 2 :]
    scenario.create_pods(first)
    scenario.wait_bound(first, 60)
    proxy.add(Fault("before", BIND, method="POST", hook=delete_node, times=1))
    scenario.create_pods(second)
    scenario.wait_bound(second, 60)
    [(gone, when)] = deleted.items()
    scenario.node_names.remove(gone)
    nodes = scenario.pod_nodes()
    on_gone = [
        record
        for pod, records in successful_binds(proxy, scenario.namespace).items()
        for record in records
        if nodes.get(pod) == gone and record.ended >= when
    ]
    late = [r.path for r in on_gone if r.started > when + 1.0]
    raced = len(on_gone) - len(late)
    assert not late, f"pods bound to the deleted node more than 1 s after: {late}"
    assert proc.proc.poll() is None
    figure.scenario = "node deleted during a cycle"
    figure.injected = "the chosen node deleted between decision and Binding (wave 2 of 2)"
    figure.checked = "no bind to the deleted node once its deletion was seen; all bound once"
    figure.notes["bound_to_deleted_node_in_race"] = raced
    check_exactly_once(scenario, proxy, names, figure, fault_ended=when)


def test_bind_fails_is_slow_or_unanswered(scenario, proxy, figure):
    """A tenth of the first Binds answer 500, a tenth wait 1 s, a twentieth get no answer
    (connection closed, not forwarded): each is retried until bound exactly once."""
    proxy.add(Fault("fail", pods_bind(r"p\d*1"), method="POST", status=500, times_per_path=1))
    proxy.add(Fault("delay", pods_bind(r"p\d*2"), method="POST", seconds=1.0, times_per_path=1))
    proxy.add(Fault("drop", pods_bind(r"p\d*[05]5"), method="POST", times_per_path=1))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(names, 90)
    assert proc.proc.poll() is None
    failed = [r for r in proxy.records() if r.fault and r.binding()]
    figure.scenario = "bind 500 / slow / no answer"
    figure.injected = "first Bind of 10% pods: 500; of 10%: +1 s; of 2%: connection closed"
    figure.checked = "each retried after backoff; every pod bound exactly once"
    figure.notes["faulted_binds"] = len(failed)
    check_exactly_once(scenario, proxy, names, figure, fault_ended=began)


def test_bind_answer_lost_after_the_apiserver_bound(scenario, proxy, figure):
    """The apiserver binds but the answer never arrives (connection closed): the scheduler must
    not bind the pod again elsewhere, and must not lose it."""
    proxy.add(Fault("lose_reply", pods_bind(r"p\d*4"), method="POST", times_per_path=1))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(names, 90)
    time.sleep(2)
    assert proc.proc.poll() is None
    figure.scenario = "bind answer lost"
    figure.injected = "first Bind of 10% pods forwarded, the answer dropped"
    figure.checked = (
        "one Binding request per pod (the outcome read back, never resent); every pod "
        "PodScheduled=True, no FailedScheduling after its bind; bound exactly once"
    )
    check_exactly_once(scenario, proxy, names, figure, fault_ended=began)
    requests = proxy.bindings(scenario.namespace)
    resent = {pod: len(records) for pod, records in requests.items() if len(records) != 1}
    assert not resent, f"Binding requests per pod, where not one: {resent}"
    not_scheduled = {
        name: condition
        for name in names
        if (condition := pod_condition(scenario.core, scenario.namespace, name)) is None
        or condition["status"] != "True"
    }
    assert not not_scheduled, f"PodScheduled is not True: {not_scheduled}"
    events = scenario.core.list_namespaced_event(scenario.namespace).items
    failed = sorted({e.involved_object.name for e in events if e.reason == "FailedScheduling"})
    assert not failed, f"FailedScheduling events for pods that were bound: {failed}"


def test_bind_with_no_answer_times_out_and_is_retried(scenario, proxy, figure):
    """Five Binds are forwarded and then left unanswered: the client gives up after its
    request timeout (30 s) and the pods, already bound, are not bound again."""
    proxy.add(Fault("hang", pods_bind(r"p1[0-4]"), method="POST", seconds=45, times_per_path=1))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(names, 60)
    hung = lambda: [r for r in proxy.records() if r.fault.startswith("hang")]  # noqa: E731
    records = wait_for(lambda: len(hung()) == 5 and hung(), 60, what="the hung binds to end")
    waited = max(r.ended - r.started for r in records)
    assert 25 < waited < 45, waited
    time.sleep(2)
    assert proc.proc.poll() is None
    figure.scenario = "bind timeout"
    figure.injected = "5 Binds forwarded, answer withheld (45 s)"
    figure.checked = "client gave up after its timeout; no second accepted bind; all bound once"
    figure.notes["client_gave_up_after_s"] = round(waited, 1)
    check_exactly_once(scenario, proxy, names, figure, fault_ended=began)


def test_bind_conflict_that_did_not_bind_loses_no_pod(scenario, proxy, figure):
    """The first Bind of a tenth of the pods answers 409 Conflict although nothing bound them
    (a conflict from a layer in between, or a stale one): kube-scheduler requeues on any bind
    error and lets the watch drop pods that are really bound; the pod must not be lost."""
    proxy.add(Fault("fail", pods_bind(r"p\d*6"), method="POST", status=409, times_per_path=1))
    proc = _start(scenario, proxy)
    names = [f"p{i}" for i in range(PODS)]
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(names, 30)
    assert proc.proc.poll() is None
    figure.scenario = "bind 409 without a binding"
    figure.injected = "first Bind of 10% pods answered 409 by the proxy (not forwarded)"
    figure.checked = "retried, every pod bound exactly once"
    check_exactly_once(scenario, proxy, names, figure, fault_ended=began)
