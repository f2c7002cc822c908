"""The secure port's certificate and flags: a self-signed pair by default, kept only in memory;
a given pair loaded; every bad combination one error naming the flags (exit 2)."""

from __future__ import annotations

import io
import os
import ssl
import tempfile

import pytest

from kubesched.cli import main
from kubesched.errors import KubeschedError
from kubesched.service.secure_serving import _self_signed, server_context
from kubesched.service.server import HealthServer


def _https_status(context: ssl.SSLContext, path: str = "/healthz") -> tuple[int, bytes]:
    import http.client

    server = HealthServer("127.0.0.1", 0, ready=lambda: True, metrics=lambda: b"",
                          ssl_context=context)  # fmt: skip
    server.start()
    try:
        client = ssl.create_default_context()
        client.check_hostname = False
        client.verify_mode = ssl.CERT_NONE
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, context=client)
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        server.stop()


def test_the_self_signed_pair_serves_and_leaves_no_file_behind():
    before = set(os.listdir(tempfile.gettempdir()))
    context = server_context(address="127.0.0.1")
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if "kubesched" in n}
    assert left == set(), "the self-signed key stayed on disk"
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert _https_status(context) == (200, b"ok\n")


def test_a_given_pair_is_loaded(tmp_path):
    cert, key = _self_signed("127.0.0.1")
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    context = server_context(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    assert _https_status(context)[0] == 200


@pytest.mark.parametrize(
    ("cert", "key", "message"),
    [
        ("c.crt", "", "--tls-cert-file needs --tls-private-key-file as well"),
        ("", "c.key", "--tls-private-key-file needs --tls-cert-file as well"),
        ("missing.crt", "missing.key", "--tls-cert-file missing.crt / --tls-private-key-file"),
    ],
    ids=["cert-without-key", "key-without-cert", "missing-files"],
)
def test_a_bad_pair_is_one_error_naming_the_flags(cert, key, message):
    with pytest.raises(KubeschedError, match=message):
        server_context(cert, key)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "10251", "--secure-port", "10259"], "--port 10251 and --secure-port 10259"),
        (["--port", "10251", "--tls-cert-file", "c.crt"], "apply to --secure-port"),
        (["--binding-workers", "0"], "--binding-workers 0: must be at least 1"),
    ],
    ids=["both-ports", "tls-files-on-the-plain-port", "no-binding-workers"],
)
def test_conflicting_run_flags_exit_2_naming_them(args, message):
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", *args], out, err) == 2
    assert message in err.getvalue()
    assert "Traceback" not in err.getvalue()
