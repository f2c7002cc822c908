"""429 Too Many Requests with ``Retry-After`` on the pods LIST, the pods WATCH and Bindings,
answered by the fault proxy in front of the real apiserver: each is tried again once the
server's wait has passed, not sooner and not much later; a watch is tried again from where it
was, never by listing again; and every pod is still bound exactly once. Timings are the
proxy's: when each answer left it and when the next request arrived."""

from __future__ import annotations

from itertools import pairwise

from faultproxy import BINDING, Fault, Record
from reliability_support import PODS, check_exactly_once, wait_for

PODS_PATH = "/api/v1/pods"
#: The Retry-After the proxy sends (seconds) on lists and watches, and on Bindings.
LIST_WAIT, BIND_WAIT = 2, 1
TIMES = 2
BOUNCED_BINDS = 30
#: How much sooner than asked a retry may arrive (clock reads on either side), and how much
#: later (the loaded machine, the informer's own backoff of 0.5-0.75 s).
EARLY, LATE = 0.05, 2.0


def _pods(records: list[Record], *, watch: bool) -> list[Record]:
    return [r for r in records if r.method == "GET" and r.path == PODS_PATH and r.watch == watch]


def _gaps(records: list[Record]) -> list[float]:
    """Seconds from each answer to the next request of the same kind."""
    return [b.started - a.ended for a, b in pairwise(records)]


def test_429_with_retry_after_on_list_watch_and_binding(scenario, proxy, figure):
    scenario.add_nodes(3)
    retry_list = {"Retry-After": str(LIST_WAIT)}
    proxy.add(Fault("fail", PODS_PATH, method="GET", watch=False, status=429,
                    headers=retry_list, times=TIMES))  # fmt: skip
    proxy.add(Fault("fail", PODS_PATH, method="GET", watch=True, status=429,
                    headers=retry_list, times=TIMES))  # fmt: skip
    bounced = proxy.add(Fault("fail", BINDING.pattern, method="POST", status=429,
                              headers={"Retry-After": str(BIND_WAIT)}, times=BOUNCED_BINDS,
                              times_per_path=1))  # fmt: skip
    proc = scenario.start_kubesched(proxy.kubeconfig(scenario.tmp_path / "proxy.kubeconfig"))
    proc.wait_ready(90)
    names = [f"p{i}" for i in range(PODS)]
    scenario.create_pods(names)
    scenario.wait_bound(names, 120)
    assert proc.terminate() == 0
    # Open watches enter the proxy's log when they end: end them.
    proxy.cut_watches()
    wait_for(lambda: len(_pods(proxy.records(), watch=True)) > TIMES, 10, what="the watch")
    records = proxy.records()

    lists, watches = _pods(records, watch=False), _pods(records, watch=True)
    # No extra LIST: the two refused and the one that worked, and no other informer re-listed.
    assert [r.status for r in lists] == [429] * TIMES + [200], lists
    others = {}
    for r in records:
        if r.method == "GET" and not r.watch and r.path.count("/") <= 4 and r.path != PODS_PATH:
            others[r.path] = others.get(r.path, 0) + 1
    assert others and all(count == 1 for count in others.values()), others
    # (a watch cut by the proxy shows the apiserver's 200 as ``upstream``)
    assert [r.status or r.upstream for r in watches] == [429] * TIMES + [200], watches

    list_gaps, watch_gaps = _gaps(lists), _gaps(watches[: TIMES + 1])
    for gap in (*list_gaps, *watch_gaps):
        assert LIST_WAIT - EARLY <= gap <= LIST_WAIT + LATE, (list_gaps, watch_gaps)

    bind_gaps = []
    for pod, binds in proxy.bindings(scenario.namespace).items():
        if binds[0].status != 429:
            assert len(binds) == 1, (pod, binds)
            continue
        assert [b.status for b in binds] == [429, 201], (pod, binds)
        bind_gaps.extend(_gaps(binds))
    assert bounced.hits == BOUNCED_BINDS and len(bind_gaps) == BOUNCED_BINDS
    assert all(BIND_WAIT - EARLY <= gap <= BIND_WAIT + LATE for gap in bind_gaps), bind_gaps

    figure.scenario = "429 with Retry-After"
    figure.injected = (
        f"pods LIST and WATCH answered 429 Retry-After {LIST_WAIT} s twice each; the first "
        f"Binding of {BOUNCED_BINDS} pods 429 Retry-After {BIND_WAIT} s"
    )
    figure.checked = (
        "each retried after the wait asked; one LIST per informer (pods: 2 refused + 1); "
        "watches retried without a LIST; exactly once"
    )
    figure.notes["list_gaps_s"] = [round(g, 2) for g in list_gaps]
    figure.notes["watch_gaps_s"] = [round(g, 2) for g in watch_gaps]
    figure.notes["bind_gap_s"] = f"{min(bind_gaps):.2f}-{max(bind_gaps):.2f}"
    check_exactly_once(scenario, proxy, names, figure, fault_ended=lists[-1].started)
