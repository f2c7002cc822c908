"""``kubesched simulate`` with the default profile (every bundled plugin installed): the queue
order kube-scheduler gives equal pods, and cluster files refused as kube-apiserver refuses them,
one line each naming file, document, object and field (``--no-validate`` reads a snapshot)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from kubesched.cli import main
from kubesched.testing.builders import make_node, make_pod

FOO = "example.com/foo"
TERMS = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
)


def _file(tmp_path: Path, *objects: dict[str, Any]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(list(objects), sort_keys=False))
    return path


def _extended_without_limit(name: str) -> dict[str, Any]:
    pod = make_pod(name).manifest()
    pod["spec"]["containers"][0]["resources"] = {"requests": {FOO: "1"}}
    return pod


def _match_fields_two_values(name: str) -> dict[str, Any]:
    pod = make_pod(name).manifest()
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    required = {"nodeSelectorTerms": [term]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
    }
    return pod


def test_simulate_binds_the_first_created(tmp_path: Path) -> None:
    """The default profile (PrioritySort, NodeResourcesFit): two 1-CPU nodes, seven 1-CPU pods
    listed newest first; the two created first are bound, as kube-scheduler binds them."""
    nodes = [make_node(f"n{i}").capacity(cpu="1").manifest() for i in (1, 2)]
    pods = []
    for i in reversed(range(7)):
        pod = make_pod(f"p{i}").req(cpu="1").manifest()
        pod["metadata"]["creationTimestamp"] = f"2025-01-01T00:00:0{i}Z"
        pods.append(pod)
    path = _file(tmp_path, *nodes, *pods)
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", str(path), "-o", "json"], out, err) == 0, err.getvalue()
    bound = sorted(p["name"] for p in json.loads(out.getvalue())["pods"] if p["node"])
    assert bound == ["p0", "p1"]


def test_each_refusal_is_one_line_naming_file_document_object_and_field(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        make_node("n1").manifest(),
        _extended_without_limit("gpu"),
        _match_fields_two_values("pinned"),
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", str(path)], out, err) == 2
    assert out.getvalue() == ""
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("warning:")]
    assert lines == [
        f"error: {path}: document 2: Pod default/gpu: spec.containers[0].resources.limits: "
        "Required value: Limit must be set for non overcommitable resources",
        f"{path}: document 3: Pod default/pinned: {TERMS}[0].matchFields[0].values: Required "
        "value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
    ]
    assert "Traceback" not in err.getvalue()


def test_no_validate_reads_a_snapshot_of_stored_objects(tmp_path: Path) -> None:
    """A snapshot's objects were stored by an apiserver (perhaps an older, laxer one)."""
    node = make_node("n1").capacity(**{FOO: "4"}).manifest()
    path = _file(tmp_path, node, _extended_without_limit("p"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["simulate", str(path), "--no-validate", "-o", "json"], out, err)
    assert code == 0, err.getvalue()
    assert '"node": "n1"' in out.getvalue()
