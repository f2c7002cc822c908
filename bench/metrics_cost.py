"""What the metrics cost: one scrape's CPU, and the CPU they add per scheduled pod.

    python -m bench.metrics_cost [--nodes 1000] [--pods 2000] [--scrapes 50] [--runs 3]

Schedules the Mixed workload (bench/workloads.py) in memory with the default profile and every
plugin, as ``kubesched run`` schedules (a :class:`~kubesched.engine.metrics.SchedulerMetrics`
attached,
each attempt recorded as the service records it), then:

- *scrape*: the process CPU time of rendering ``/metrics`` (the exposition the health server
  sends) over what that run recorded, averaged over ``--scrapes`` renders; and the same for the
  hand-written exposition it replaced, given the same observations (``--before FILE``: that
  ``metrics.py``, e.g. from ``git show 0be4e20:core/kubesched/metrics.py``);
- *per pod*: the scheduling thread's CPU time per pod with metrics and without (``metrics=None``,
  what ``simulate`` runs), the runs interleaved (who goes first alternating), the median of
  ``--runs`` each; and what the metrics calls themselves cost, timed one by one.

The figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.backends.memory import InMemoryBackend
from kubesched.config import default_config
from kubesched.config.types import DEFAULT_SCHEDULER_NAME
from kubesched.engine.metrics import SchedulerMetrics
from kubesched.engine.scheduler import Attempt, Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.secure_serving import server_context
from kubesched.service.server import HealthServer

from .workloads import MIXED

__all__ = ["main"]


class _Tee:
    """Records into several metrics objects at once (so both expositions see the same data)."""

    def __init__(self, *targets: Any) -> None:
        self.targets = targets

    def __getattr__(self, name: str) -> Callable[..., Any]:
        calls = [getattr(t, name) for t in self.targets if hasattr(t, name)]

        def call(*args: Any) -> Any:
            results = [c(*args) for c in calls]
            return results[0]  # the first target's answer (plugin_buffer_has_room)

        return call


def _result(attempt: Attempt) -> str:
    if attempt.node_name is not None:
        return "scheduled"
    return "error" if attempt.reason == "SchedulerError" else "unschedulable"


def schedule(nodes: int, pods: int, metrics: Any) -> tuple[float, int]:
    """Schedule the workload; the scheduling thread's CPU seconds and the pods bound."""
    registry = Registry.installed()
    config = default_config(registry)
    backend = InMemoryBackend(
        [Node(n) for n in MIXED.nodes(nodes)],
        [Pod(p) for p in MIXED.pods(pods, DEFAULT_SCHEDULER_NAME, "metrics-cost")],
    )
    scheduler = Scheduler(
        config, backend, registry, inline_binding=True, metrics=metrics, record_attempts=False
    )
    if metrics is not None:
        scheduler.on_attempt = lambda a, s: metrics.attempt(_result(a), a.pod.scheduler_name, s)
    scheduler.start()
    began = time.thread_time()
    last_flush = time.monotonic()
    while scheduler.schedule_one(timeout=0):
        if metrics is not None and time.monotonic() - last_flush >= 1.0:
            metrics.flush()  # the scheduling loop's once-a-second flush
            last_flush = time.monotonic()
    spent = time.thread_time() - began
    scheduler.stop()
    bound = sum(1 for p in backend.pods.values() if p.node_name)
    return spent, bound


def _load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("metrics_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "kubesched"  # its relative import of .status
    spec.loader.exec_module(module)
    return module


def scrape_cpu(render: Callable[[], bytes], scrapes: int) -> tuple[float, int]:
    """Milliseconds of process CPU per render, and the exposition's size in bytes."""
    size = len(render())
    began = time.process_time()
    for _ in range(scrapes):
        render()
    return (time.process_time() - began) / scrapes * 1e3, size


def served_scrape_cpu(render: Callable[[], bytes], scrapes: int) -> float:
    """Milliseconds of the health server's CPU (its selector thread and workers) per HTTPS
    scrape of ``render``'s exposition, a TLS handshake each (the server closes every
    connection), with an authorizer that allows at once."""
    import http.client
    import ssl

    server = HealthServer(
        "127.0.0.1",
        0,
        ready=lambda: True,
        metrics=render,
        ssl_context=server_context(),
        authorize=lambda header: (200, ""),
    )
    server.start()
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE

    def scrape() -> None:
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, context=client)
        connection.request("GET", "/metrics", headers={"Authorization": "Bearer x"})
        assert connection.getresponse().read()
        connection.close()

    def server_cpu() -> float:
        threads = [server._thread, *getattr(server._pool, "_threads", ())]
        return sum(
            time.clock_gettime(time.pthread_getcpuclockid(t.ident))
            for t in threads
            if t is not None and t.ident is not None and t.is_alive()
        )

    try:
        for _ in range(4):  # every worker started
            scrape()
        began = server_cpu()
        for _ in range(scrapes):
            scrape()
        return (server_cpu() - began) / scrapes * 1e3
    finally:
        server.stop()


def call_costs(count: int = 20000) -> dict[str, float]:
    """Microseconds of CPU per metrics call, each timed alone (``count`` calls)."""
    from kubesched.engine.runtime import _timed

    metrics = SchedulerMetrics()

    def per_call(call: Callable[[], object]) -> float:
        began = time.thread_time()
        for _ in range(count):
            call()
        return (time.thread_time() - began) / count * 1e6

    def buffered_then_flushed() -> None:
        metrics.plugin("NodeResourcesFit", "Filter", "Success", 0.00002)
        if not metrics.plugin_buffer_has_room():
            metrics.flush()

    def plain(state: object, pod: object, node: object) -> None:
        return None

    timed = _timed(plain, "NodeResourcesFit", "Filter", lambda *a: None)
    return {
        "extension_point": per_call(
            lambda: metrics.extension_point("Filter", "Success", "p", 1e-3)
        ),
        "attempt (counter + histogram)": per_call(lambda: metrics.attempt("scheduled", "p", 1e-2)),
        "binding": per_call(lambda: metrics.binding("success", 1e-3)),
        "plugin, buffered and flushed": per_call(buffered_then_flushed),
        "a timed plugin call, less the call": per_call(lambda: timed(1, 2, 3))
        - per_call(lambda: plain(1, 2, 3)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", help="the hand-written metrics.py, for the scrape's before")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}; Mixed {args.nodes} nodes / {args.pods} pods")

    metrics = SchedulerMetrics()
    before = _load(args.before).SchedulerMetrics() if args.before else None
    tee = _Tee(metrics, *([before] if before is not None else []))
    schedule(args.nodes, args.pods, tee)
    metrics.set_pending({"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0})
    metrics.set_leader(True)
    after_ms, after_size = scrape_cpu(metrics.render, args.scrapes)
    series = sum(
        len({tuple(sorted((k, v) for k, v in s.labels.items() if k != "le")) for s in m.samples})
        for m in metrics.registry.collect()
    )
    print(
        f"scrape, prometheus_client: {after_ms:.1f} ms CPU, {after_size:,} bytes, {series} series"
    )
    served = served_scrape_cpu(metrics.render, args.scrapes)
    print(f"  served over HTTPS: {served:.1f} ms of the health server's CPU per scrape")
    if before is not None:
        before.set_pending({"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0})
        before.set_leader(True)
        before_ms, before_size = scrape_cpu(before.render, args.scrapes)
        print(f"scrape, hand-written:      {before_ms:.1f} ms CPU, {before_size:,} bytes")
        served = served_scrape_cpu(before.render, args.scrapes)
        print(f"  served over HTTPS: {served:.1f} ms of the health server's CPU per scrape")
    print(f"plugin observations dropped (buffer full): {metrics.plugin_observations_dropped}")

    with_metrics: list[float] = []
    without: list[float] = []
    for run in range(args.runs):
        pair = [(True, with_metrics), (False, without)]
        for metered, into in pair if run % 2 == 0 else pair[::-1]:  # alternate who goes first
            spent, bound = schedule(args.nodes, args.pods, SchedulerMetrics() if metered else None)
            into.append(spent / bound * 1e6)
    on, off = statistics.median(with_metrics), statistics.median(without)
    print(
        f"per pod: {on:.0f} µs CPU with metrics, {off:.0f} µs without: "
        f"{on - off:+.0f} µs ({(on - off) / off:+.1%}); runs {with_metrics} / {without}"
    )
    for what, micros in call_costs().items():
        print(f"  {what}: {micros:.2f} µs")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
