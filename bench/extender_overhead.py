"""What a Python extender costs a stock kube-scheduler: pods/s and p99, with and without it.

``python -m bench.extender_overhead --nodes 100 --pods 500`` starts the control plane of
tests/controlplane, creates the nodes once, then for each mode starts kube-scheduler v1.37 (its
default profile less the plugins kubesched lacks), creates the pods at once and watches them
bound:

- ``stock``: kube-scheduler alone;
- ``stock + extender``: the same, with ``kubesched extender serve`` (its own process, watching the
  cluster; LabelFilter and NodeResourcesFit's score, ``nodeCacheCapable``) as filter and
  prioritize extender.

pods/s is the pods over the time from the first creation seen to the last binding seen; p99 is of
each pod's creation-to-binding time. Prints one Markdown row per mode.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from bench.cluster import transport_for
from bench.contenders import DISABLED_PLUGINS
from bench.measure import PodWatch, percentile
from kubesched.testing import _procs
from kubesched.testing.controlplane import ControlPlane, find_binaries, ready_node

NAMESPACE = "extender-bench"
LABEL = "bench.kubesched.io/extender"
DISABLED = [{"name": n} for n in DISABLED_PLUGINS]
SERVED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "plugins": {
                "multiPoint": {"disabled": DISABLED},
                "filter": {"enabled": [{"name": "LabelFilter"}]},
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]},
            },
            "pluginConfig": [{"name": "LabelFilter", "args": {"labels": {LABEL: "yes"}}}],
        }
    ],
}


def _pod(name: str, scheduler: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                }
            ],
        },
    }


def _serve_extender(kubeconfig: Path, workdir: Path) -> tuple[_procs.Child, str]:
    config = workdir / "served.yaml"
    config.write_text(yaml.safe_dump(SERVED))
    (port,) = _procs.free_ports(1)
    child = _procs.Child(
        "kubesched-extender",
        [
            sys.executable,
            "-m",
            "kubesched",
            "extender",
            "serve",
            "--config",
            str(config),
            "--port",
            str(port),
            "--kubeconfig",
            str(kubeconfig),
        ],
        workdir / "extender.log",
    )
    _procs.wait_for_ok(f"http://127.0.0.1:{port}/readyz", child=child, timeout=60)
    return child, f"http://127.0.0.1:{port}"


def run_mode(cp: ControlPlane, pods: int, extender_url: str | None) -> tuple[float, float]:
    scheduler = f"bench-{'ext' if extender_url else 'stock'}-{int(time.time())}"
    config: dict = {
        "profiles": [
            {"schedulerName": scheduler, "plugins": {"multiPoint": {"disabled": DISABLED}}}
        ]
    }
    if extender_url:
        config["extenders"] = [
            {
                "urlPrefix": extender_url,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 1,
                "nodeCacheCapable": True,
            }
        ]
    transport = transport_for(cp.admin_kubeconfig)
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    with cp.start_reference_scheduler(config):
        version = transport.request("GET", path)["metadata"]["resourceVersion"]
        watch = PodWatch(transport, NAMESPACE, str(version)).start()
        names = [f"{scheduler}-{i}" for i in range(pods)]
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(lambda n: transport.request("POST", path, body=_pod(n, scheduler)), names)
            )
        if not watch.wait_bound(pods, timeout=600):
            raise SystemExit(f"only {len(watch.bound)} of {pods} pods bound in 600s")
        watch.stop()
    began = min(watch.added[n] for n in names)
    ended = max(watch.bound[n] for n in names)
    latencies = [watch.bound[n] - watch.added[n] for n in names]
    transport.request("DELETE", path, [("gracePeriodSeconds", 0)])
    return pods / (ended - began), percentile(latencies, 99)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=500)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="extender-bench-"))
    cp = ControlPlane(find_binaries())
    cp.start()
    extender = None
    try:
        transport = transport_for(cp.admin_kubeconfig)
        transport.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NAMESPACE}})
        for i in range(args.nodes):
            node = ready_node(f"bench-node-{i}", labels={LABEL: "yes"})
            transport.request("POST", "/api/v1/nodes", body=node)
        rows = []
        rows.append(("stock kube-scheduler", *run_mode(cp, args.pods, None)))
        extender, url = _serve_extender(cp.admin_kubeconfig, workdir)
        rows.append(("stock kube-scheduler + kubesched extender", *run_mode(cp, args.pods, url)))
        print(f"| {args.nodes} nodes, {args.pods} pods | pods/s | p99 (s) |")
        print("|---|---|---|")
        for name, rate, p99 in rows:
            print(f"| {name} | {rate:.0f} | {p99:.2f} |")
    finally:
        if extender is not None:
            extender.stop()
        cp.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
