"""The live what-if's transport sends reads only: any other verb is refused before anything
leaves the process (the integration test proves the same from the apiserver's audit log)."""

from __future__ import annotations

import pytest
from kubernetes import client

from kubesched.backends.kube.readonly import ReadOnlyTransport
from kubesched.errors import KubeschedError


@pytest.mark.parametrize("verb", ["POST", "PUT", "PATCH", "DELETE"])
def test_writes_are_refused_before_sending(verb: str) -> None:
    configuration = client.Configuration()
    configuration.host = "https://127.0.0.1:9"  # nothing listens: a sent request would fail
    transport = ReadOnlyTransport(client.ApiClient(configuration))
    try:
        with pytest.raises(KubeschedError, match=f"^{verb} /api/v1/pods: a read-only what-if"):
            transport.request(verb, "/api/v1/pods", body={})
    finally:
        transport.close()
