"""Nothing leaks: the health and metrics endpoint shows no object data and no secret, and the logs
never print a token, a key, a certificate or the kubeconfig's contents, at the most verbose
level, whether things work or fail. The endpoint is the default one, HTTPS on the secure port,
scraped with a token (so the TokenReview that carries it goes through the logged request
path too)."""

from __future__ import annotations

import base64
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import yaml
from kubesched_process import LABEL, SA_NAME, SA_NAMESPACE, apply_rbac, free_port, pod_manifest

PATHS = ["/healthz", "/readyz", "/metrics", "/metrics?name[]=x", "/nope", "/../etc/passwd"]


def _get(port: int, path: str, token: str | None = None) -> str:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the self-signed serving certificate
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as r:
            return r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.read().decode(errors="replace")
    except OSError:
        return ""


def _run(config: Path, kubeconfig: Path, log: Path, port: int) -> subprocess.Popen:
    """``kubesched -vv run``: debug logging, the most that is ever printed."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "-vv",
            "run",
            "--config",
            str(config),
            "--kubeconfig",
            str(kubeconfig),
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            str(port),
        ],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"},
    )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _config(tmp_path: Path) -> Path:
    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "deploy" / "scheduler-config.yaml").read_text())
    config["leaderElection"] = {"leaderElect": False}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _secrets_of(kubeconfig_text: str) -> list[str]:
    """Every credential in a kubeconfig, as written and decoded, and its distinctive lines."""
    document = yaml.safe_load(kubeconfig_text)
    found = []
    for user in document.get("users") or []:
        for key, value in (user.get("user") or {}).items():
            if not isinstance(value, str) or len(value) < 16:
                continue
            found.append(value)
            if key.endswith("-data"):
                decoded = base64.b64decode(value).decode(errors="replace")
                found.extend(line for line in decoded.splitlines() if len(line) > 20)
    for cluster in document.get("clusters") or []:
        ca = (cluster.get("cluster") or {}).get("certificate-authority-data")
        if ca:
            found.append(ca)
            found.extend(
                line
                for line in base64.b64decode(ca).decode().splitlines()
                if len(line) > 20 and "BEGIN" not in line and "END" not in line
            )
    return found


def test_endpoints_and_logs_expose_nothing(
    control_plane, admin_client, core_v1, namespace, nodes, tmp_path
):
    apply_rbac(admin_client)
    token = core_v1.create_namespaced_service_account_token(
        SA_NAME, SA_NAMESPACE, {"spec": {"expirationSeconds": 3600}}
    ).status.token
    admin = yaml.safe_load(Path(control_plane.admin_kubeconfig).read_text())
    kubeconfig = tmp_path / "sa.kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": admin["clusters"],
                "users": [{"name": "sa", "user": {"token": token}}],
                "contexts": [
                    {
                        "name": "sa",
                        "context": {"cluster": admin["clusters"][0]["name"], "user": "sa"},
                    }
                ],
                "current-context": "sa",
            }
        )
    )
    marker = uuid.uuid4().hex
    core_v1.create_namespaced_secret(
        namespace, {"metadata": {"name": "db"}, "stringData": {"password": f"pw-{marker}"}}
    )
    node = nodes(f"node-{marker[:8]}", labels={LABEL: "true"}).metadata.name
    placed = pod_manifest(f"pod-{marker[:8]}")
    placed["metadata"]["labels"] = {"team": f"team-{marker[:8]}"}
    placed["metadata"]["annotations"] = {"note": f"note-{marker}"}
    stuck = pod_manifest(f"stuck-{marker[:8]}")
    stuck["spec"]["nodeSelector"] = {"nowhere": "true"}
    port = free_port()
    log = tmp_path / "kubesched.log"
    proc = _run(_config(tmp_path), kubeconfig, log, port)
    try:
        deadline = time.monotonic() + 60
        while _get(port, "/readyz").strip() != "ok" and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        core_v1.create_namespaced_pod(namespace, placed)
        core_v1.create_namespaced_pod(namespace, stuck)
        while time.monotonic() < deadline:
            pod = core_v1.read_namespaced_pod(placed["metadata"]["name"], namespace)
            if pod.spec.node_name:
                break
            time.sleep(0.2)
        assert pod.spec.node_name == node
        time.sleep(1.5)  # the stuck pod's FailedScheduling, a few retries
        answers = {path: _get(port, path, token) for path in PATHS}
        answers["/metrics without a token"] = _get(port, "/metrics")
    finally:
        _stop(proc)
    forbidden = {
        "pod names": placed["metadata"]["name"],
        "the failed pod": stuck["metadata"]["name"],
        "namespace": namespace,
        "node name": node,
        "label value": f"team-{marker[:8]}",
        "annotation": f"note-{marker}",
        "secret": f"pw-{marker}",
        "token": token,
    }
    for path, text in answers.items():
        for what, value in forbidden.items():
            assert value not in text, f"{path} shows the {what}"
    assert "scheduler_schedule_attempts_total" in answers["/metrics"]
    assert answers["/metrics without a token"] == "Unauthorized\n"
    logs = log.read_text(errors="replace")
    assert "DEBUG" in logs or '"debug"' in logs.lower(), "not the debug level"
    for value in [token, f"pw-{marker}", *_secrets_of(kubeconfig.read_text())]:
        assert value not in logs, f"the log shows a credential ({value[:12]}...)"
    for line in kubeconfig.read_text().splitlines():
        if len(line) > 24:
            assert line.strip() not in logs, f"the log shows kubeconfig content: {line[:40]}"


def test_a_failing_start_prints_no_credentials(tmp_path):
    """A kubeconfig whose key is broken and whose server is not there: the errors name the
    file and the problem, never its contents."""
    marker = uuid.uuid4().hex
    fake_key = (
        "-----BEGIN PRIVATE KEY-----\n"
        + base64.b64encode(marker.encode() * 4).decode()
        + "\n-----END PRIVATE KEY-----\n"
    )
    token = f"tok-{marker}"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{free_port()}"}}],
        "users": [
            {
                "name": "broken-key",
                "user": {
                    "client-certificate-data": base64.b64encode(fake_key.encode()).decode(),
                    "client-key-data": base64.b64encode(fake_key.encode()).decode(),
                },
            },
            {"name": "token", "user": {"token": token}},
        ],
        "contexts": [
            {"name": "broken-key", "context": {"cluster": "c", "user": "broken-key"}},
            {"name": "token", "context": {"cluster": "c", "user": "token"}},
        ],
    }
    secrets = [marker, token, base64.b64encode(marker.encode() * 4).decode()[:40]]
    for context in ("broken-key", "token"):
        kubeconfig = tmp_path / f"{context}.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({**document, "current-context": context}))
        port = free_port()
        log = tmp_path / f"{context}.log"
        proc = _run(_config(tmp_path), kubeconfig, log, port)
        try:
            deadline = time.monotonic() + 8
            readyz = ""
            while proc.poll() is None and time.monotonic() < deadline:
                readyz = _get(port, "/readyz") or readyz
                time.sleep(0.3)
        finally:
            _stop(proc)
        text = log.read_text(errors="replace") + readyz
        for secret in secrets:
            assert secret not in text, f"{context}: a credential was printed"
