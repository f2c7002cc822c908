"""How much CPU one Binding POST costs the scheduler, by the way it is sent.

    python -m bench.request_cost [--count N]

Starts the benchmark's control plane, creates N unassigned pods per way and binds each from one
thread, measuring that thread's CPU time (``time.thread_time``) and the wall time per request:

1. the official client's generated method (``CoreV1Api.create_namespaced_pod_binding``, answer
   left unparsed: the client cannot read a Binding's answer back into its model);
2. raw JSON through the official client's ``ApiClient.call_api`` (its urllib3 ``PoolManager``,
   with the client's request and response wrappers);
3. :class:`~kubesched.backends.kube.transport.Transport` as ``kubesched run`` sends a Binding
   (urllib3's connection pool, the exchange :mod:`kubesched.backends.kube.http_exchange`'s,
   with a deadline and caps: :mod:`kubesched.backends.kube.http_client`);
4. the floor: the request's bytes written on one TLS socket and the answer read back by its
   Content-Length, no HTTP library, no checks (what no HTTP client can go below).

The figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s

from kubesched.backends.kube.transport import Transport

from .cluster import BenchCluster, transport_for
from .contenders import SCHEDULER_USER
from .workloads import BASIC

__all__ = ["main"]


def _binding(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
    }


def _ways(transport: Transport, namespace: str) -> dict[str, Callable[[str], object]]:
    path = f"/api/v1/namespaces/{namespace}/pods"
    api = transport.api_client
    core = k8s.CoreV1Api(api)

    def call_api(name: str) -> object:
        request = api.param_serialize(
            "POST",
            f"{path}/{name}/binding",
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            body=_binding(namespace, name),
            auth_settings=["BearerToken"],
        )
        return json.loads(api.call_api(*request).read())

    return {
        "CoreV1Api.create_namespaced_pod_binding": lambda name: core.create_namespaced_pod_binding(
            name, namespace, _binding(namespace, name), _preload_content=False
        ).read(),
        "raw JSON via ApiClient.call_api": call_api,
        "Transport.request": lambda name: transport.request(
            "POST", f"{path}/{name}/binding", body=_binding(namespace, name)
        ),
        "floor: one TLS socket, no HTTP library": _floor(transport, path),
    }


def _floor(transport: Transport, path: str) -> Callable[[str], object]:
    """Bind over one raw TLS socket: the cost of TLS, the syscalls and JSON alone."""
    pool = transport.pool
    connection = pool.pool._get_conn()
    connection.connect()
    sock = connection.sock
    token = transport._headers(b"", "")
    fixed = "".join(f"{k}: {v}\r\n" for k, v in {**pool.default_headers, **token}.items())

    def send(name: str) -> object:
        namespace = path.split("/")[4]
        body = json.dumps(_binding(namespace, name), separators=(",", ":")).encode()
        sock.sendall(
            f"POST {path}/{name}/binding HTTP/1.1\r\nHost: {pool.host_header}\r\n{fixed}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
        head, _, rest = answer.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(rest) < length:
            rest += sock.recv(65536)
        return json.loads(rest)

    return send


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.request_cost", description=__doc__)
    parser.add_argument("--count", type=int, default=1500, help="Bindings per way")
    args = parser.parse_args(argv)
    with BenchCluster() as cluster:
        cluster.ensure_nodes(BASIC, 1)
        transport = transport_for(cluster.control_plane.kubeconfig_for(SCHEDULER_USER), 4)
        print(f"{'way':48} CPU µs/request  wall µs/request")
        for index, (way, send) in enumerate(_ways(transport, cluster.namespace).items()):
            pods = BASIC.pods(args.count, "nobody", f"way{index}")
            cluster.create_pods(pods)
            names = [pod["metadata"]["name"] for pod in pods]
            send(names[0])  # connections open before the clock runs
            cpu, wall = time.thread_time(), time.perf_counter()
            for name in names[1:]:
                send(name)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            count = len(names) - 1
            print(f"{way:48} {cpu / count * 1e6:14.0f}  {wall / count * 1e6:15.0f}")
            cluster.delete_pods()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
