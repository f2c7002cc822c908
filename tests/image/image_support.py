"""The container engine, the base image and the build, for the image tests.

:func:`find_engine` picks the engine: ``$KUBESCHED_CONTAINER_ENGINE`` (a command line, e.g.
``podman --runtime runc``), else a ``docker`` whose daemon answers, else ``podman`` (with
``--runtime runc`` when runc is installed: crun fails on hosts with hybrid cgroups). Under
``CI=true`` as root, a missing podman is installed with Debian's packages (podman, runc,
mmdebstrap). :func:`base_image` gives the Dockerfile's pinned ``PYTHON_IMAGE`` when the engine
has it or can pull it, else a stand-in made from Debian bookworm packages with mmdebstrap, kept
in the engine's storage under a tag naming its recipe, so that a machine builds it once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
IN_CI = os.environ.get("CI") == "true"

ENGINE_ENV = "KUBESCHED_CONTAINER_ENGINE"
#: A base image to build on instead of the pinned one (e.g. a mirror's copy of it).
BASE_ENV = "KUBESCHED_IMAGE_BASE"
DEBIAN_PACKAGES = ("podman", "runc", "mmdebstrap")

#: The stand-in for python:3.11-slim-bookworm: Debian's python3 on a minimal bookworm, without
#: documentation, manuals or translations (as Debian's slim images), and /usr merged by
#: mmdebstrap's hook rather than by the usrmerge package (which would bring perl).
STANDIN_RECIPE = (
    "mmdebstrap",
    "--variant=minbase",
    "--include=ca-certificates,python3,python3-venv",
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "bookworm",
)
STANDIN_REPOSITORY = "localhost/kubesched-standin-python"


class EngineUnavailable(Exception):
    """No container engine can be had; the message says what is missing."""


@dataclass(frozen=True)
class Engine:
    """A container engine's command line (``docker`` or ``podman ...``) and its environment."""

    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.command[0]).name

    @property
    def is_podman(self) -> bool:
        return "podman" in self.name

    def __str__(self) -> str:
        return shlex.join(self.command)

    def run(
        self, *args: str, timeout: float = 900, check: bool = False, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*self.command, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **self.env},
            input=input,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"`{self} {shlex.join(args)}` exited with {result.returncode}:\n"
                f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
            )
        return result

    def has_image(self, reference: str) -> bool:
        return self.run("image", "inspect", reference, timeout=60).returncode == 0


def _podman_env(workdir: Path) -> dict[str, str]:
    """Podman's default ulimits cannot be raised in some sandboxes (runc: "error setting
    rlimits ... operation not permitted"); without a containers.conf of the host's own, point
    podman at one that sets none."""
    if os.environ.get("CONTAINERS_CONF") or Path("/etc/containers/containers.conf").exists():
        return {}
    conf = workdir / "containers.conf"
    conf.write_text("[containers]\ndefault_ulimits = []\n")
    return {"CONTAINERS_CONF": str(conf)}


def _answers(command: Sequence[str], env: dict[str, str]) -> str | None:
    """None when ``command info`` succeeds, else why not."""
    try:
        result = subprocess.run(
            [*command, "info"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **env},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if result.returncode == 0:
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {result.returncode}"


def _podman(workdir: Path) -> Engine | None:
    podman = shutil.which("podman")
    if podman is None:
        return None
    runtime = ("--runtime", "runc") if shutil.which("runc") else ()
    return Engine((podman, *runtime), _podman_env(workdir))


def _install_debian_packages() -> str:
    """apt-get install podman runc mmdebstrap (CI, as root); the output's tail on failure."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", *DEBIAN_PACKAGES],
    ):
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=900, env=env, check=False
        )
        if result.returncode != 0:
            return f"`{shlex.join(command)}` failed: {result.stderr.strip()[-1000:]}"
    return ""


def can_install_packages() -> bool:
    return IN_CI and os.geteuid() == 0 and shutil.which("apt-get") is not None


def find_engine(workdir: Path) -> tuple[Engine, list[str]]:
    """The engine to use and what was done to get it (lines for the report)."""
    notes: list[str] = []
    if given := os.environ.get(ENGINE_ENV):
        engine = Engine(tuple(shlex.split(given)))
        if engine.is_podman:
            engine = Engine(engine.command, _podman_env(workdir))
        if problem := _answers(engine.command, engine.env):
            raise EngineUnavailable(f"${ENGINE_ENV}={given!r} does not answer: {problem}")
        return engine, [f"container engine from ${ENGINE_ENV}: {engine}"]
    tried: list[str] = []
    if docker := shutil.which("docker"):
        if (problem := _answers([docker], {})) is None:
            return Engine((docker,)), ["container engine: docker"]
        tried.append(f"docker: {problem}")
    if shutil.which("podman") is None or shutil.which("mmdebstrap") is None:
        if can_install_packages():
            if problem := _install_debian_packages():
                raise EngineUnavailable(problem)
            notes.append(f"installed {' '.join(DEBIAN_PACKAGES)} with apt-get")
    engine = _podman(workdir)
    if engine is None:
        tried.append("podman: not installed")
    elif (problem := _answers(engine.command, engine.env)) is None:
        return engine, [*notes, f"container engine: {engine}"]
    else:
        tried.append(f"{engine}: {problem}")
    raise EngineUnavailable(
        "; ".join(tried) + f" (install Debian's {' '.join(DEBIAN_PACKAGES)}, or set ${ENGINE_ENV},"
        " e.g. 'podman --runtime runc')"
    )


# -- the base image ----------------------------------------------------------------------------


def pinned_base() -> str:
    """deploy/Dockerfile's default PYTHON_IMAGE."""
    text = (DEPLOY / "Dockerfile").read_text()
    match = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.MULTILINE)
    assert match, "deploy/Dockerfile has no `ARG PYTHON_IMAGE=...`"
    return match.group(1)


def qualified(reference: str) -> str:
    """A Docker Hub short name in full (podman does not guess registries without a prompt)."""
    first = reference.split("/", 1)[0]
    if "/" not in reference:
        return f"docker.io/library/{reference}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{reference}"
    return reference


def standin_tag() -> str:
    recipe = hashlib.sha256(shlex.join(STANDIN_RECIPE).encode()).hexdigest()[:12]
    return f"{STANDIN_REPOSITORY}:3-bookworm-{recipe}"


@dataclass(frozen=True)
class Base:
    reference: str
    #: True when it is the Dockerfile's pinned image, False for the stand-in.
    pinned: bool
    notes: tuple[str, ...]


def base_image(engine: Engine) -> Base:
    """The pinned PYTHON_IMAGE if it can be had, else the stand-in (built once per machine)."""
    if given := os.environ.get(BASE_ENV):
        if not engine.has_image(given):
            engine.run("pull", given, timeout=600, check=True)
        return Base(given, pinned=False, notes=(f"base image from ${BASE_ENV}: {given}",))
    pinned = qualified(pinned_base())
    if engine.has_image(pinned):
        return Base(pinned, pinned=True, notes=(f"base image: {pinned} (already pulled)",))
    pulled = engine.run("pull", pinned, timeout=600)
    if pulled.returncode == 0:
        return Base(pinned, pinned=True, notes=(f"base image: {pinned} (pulled)",))
    why = (pulled.stderr.strip().splitlines() or ["no reason given"])[-1]
    tag = standin_tag()
    notes = [
        f"the pinned base {pinned} cannot be pulled ({why}): building on a stand-in made from "
        f"Debian bookworm packages, {tag}; this checks the Dockerfile, not the pinned base"
    ]
    if engine.has_image(tag):
        notes.append(f"stand-in base: reused {tag} from the engine's storage")
        return Base(tag, pinned=False, notes=tuple(notes))
    if shutil.which("mmdebstrap") is None and can_install_packages():
        if problem := _install_debian_packages():
            raise EngineUnavailable(problem)
        notes.append(f"installed {' '.join(DEBIAN_PACKAGES)} with apt-get")
    if shutil.which("mmdebstrap") is None:
        raise EngineUnavailable(
            f"the pinned base {pinned} cannot be pulled ({why}) and mmdebstrap, which builds "
            "the stand-in, is not installed (apt-get install mmdebstrap)"
        )
    with tempfile.TemporaryDirectory(prefix="kubesched-standin-") as scratch:
        tarball = Path(scratch) / "base.tar"
        made = subprocess.run(
            [*STANDIN_RECIPE, str(tarball)],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if made.returncode != 0:
            raise AssertionError(f"mmdebstrap failed:\n{made.stderr[-4000:]}")
        engine.run("import", "--change", 'CMD ["/bin/bash"]', str(tarball), tag, check=True)
    notes.append(f"stand-in base: built {tag} with mmdebstrap (kept for the next run)")
    return Base(tag, pinned=False, notes=tuple(notes))


# -- the build ---------------------------------------------------------------------------------


def _pip_setting(variable: str, key: str) -> str:
    """The host's pip setting: its environment variable, else its configuration."""
    if value := os.environ.get(variable):
        return value
    result = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", key],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.stdout.strip() if result.returncode == 0 else ""


def host_ca_bundle() -> Path | None:
    for candidate in (
        os.environ.get("PIP_CERT"),
        _pip_setting("PIP_CERT", "global.cert"),
        os.environ.get("SSL_CERT_FILE"),
        "/etc/ssl/certs/ca-certificates.crt",
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@dataclass(frozen=True)
class BuildSettings:
    """What the build stage gets for pip, and must not pass on."""

    index_url: str
    timeout: str
    #: A line only the CA bundle given as the pip-cert secret holds.
    cert_marker: str
    cert: Path | None

    def args(self) -> list[str]:
        args = ["--build-arg", f"PIP_INDEX_URL={self.index_url}"]
        args += ["--build-arg", f"PIP_DEFAULT_TIMEOUT={self.timeout}"]
        if self.cert is not None:
            args += ["--secret", f"id=pip-cert,src={self.cert}"]
        return args


def build_settings(secrets: Path) -> BuildSettings:
    """The host's index, timeout and CA bundle (pip inside the build reaches the index with
    them), the bundle marked with a comment line to look for in the images."""
    marker = f"# kubesched build-stage only {uuid.uuid4().hex}"
    cert = None
    if bundle := host_ca_bundle():
        cert = secrets / "pip-cert.pem"
        cert.write_text(bundle.read_text() + f"\n{marker}\n")
    return BuildSettings(
        index_url=_pip_setting("PIP_INDEX_URL", "global.index-url") or "https://pypi.org/simple",
        timeout=_pip_setting("PIP_DEFAULT_TIMEOUT", "global.timeout") or "120",
        cert_marker=marker,
        cert=cert,
    )


def build_image(
    engine: Engine,
    context: Path,
    tag: str,
    *args: str,
    dockerfile: Path | None = None,
    timeout: float = 1800,
) -> subprocess.CompletedProcess[str]:
    """``engine build`` of ``context`` with its deploy/Dockerfile (as deploy/README.md says),
    or with ``dockerfile``."""
    command = ["build", "-t", tag, "--network", "host"]
    command += ["-f", str(dockerfile or context / "deploy" / "Dockerfile")]
    if engine.is_podman and dockerfile is None:
        # Docker reads deploy/Dockerfile.dockerignore by itself; podman is told.
        command += ["--ignorefile", str(context / "deploy" / "Dockerfile.dockerignore")]
    env = {} if engine.is_podman else {"DOCKER_BUILDKIT": "1"}
    return Engine(engine.command, {**engine.env, **env}).run(
        *command, *args, str(context), timeout=timeout, check=True
    )


def image_size(engine: Engine, reference: str) -> int:
    result = engine.run("image", "inspect", "--format", "{{.Size}}", reference, check=True)
    return int(result.stdout.strip())


def image_config(engine: Engine, reference: str) -> dict[str, Any]:
    result = engine.run("image", "inspect", reference, check=True)
    (image,) = json.loads(result.stdout)
    config: dict[str, Any] = image.get("Config") or {}
    return config


def image_history(engine: Engine, reference: str) -> str:
    return engine.run(
        "history", "--no-trunc", "--format", "{{.CreatedBy}}", reference, check=True
    ).stdout


def image_files(engine: Engine, reference: str) -> Iterator[tuple[str, bytes]]:
    """Every regular file of the image's filesystem, as (path, content)."""
    name = f"kubesched-export-{uuid.uuid4().hex[:8]}"
    engine.run("create", "--name", name, reference, check=True)
    try:
        with tempfile.TemporaryFile() as tar_file:
            subprocess.run(
                [*engine.command, "export", name],
                stdout=tar_file,
                env={**os.environ, **engine.env},
                timeout=600,
                check=True,
            )
            tar_file.seek(0)
            with tarfile.open(fileobj=tar_file) as archive:
                for member in archive:
                    if member.isfile():
                        extracted = archive.extractfile(member)
                        assert extracted is not None
                        yield member.name, extracted.read()
    finally:
        engine.run("rm", "-f", name, timeout=120)


# -- what the tests build ----------------------------------------------------------------------


#: The third-party plugins the tests add: (profile name, distribution, label it requires).
WHEELHOUSE_PLUGIN = ("AcmeZone", "acme-kubesched-zone", "acme.example/zone")
DERIVED_PLUGIN = ("AcmeRack", "acme-kubesched-rack", "acme.example/rack")

#: What the build context holds (deploy/Dockerfile.dockerignore lets in no more).
_CONTEXT = ("pyproject.toml", "README.md", "core", "plugins", "deploy")
_LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests", "*.whl")


def build_context(directory: Path) -> Path:
    """The repository's build context, copied, with a plugin wheel in its wheelhouse."""
    for name in _CONTEXT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, directory / name, ignore=_LEFT_OUT)
        else:
            shutil.copy2(source, directory / name)
    from deploy_support import plugin_wheel as _plugin_wheel  # tests/deploy, on sys.path

    name, dist, label = WHEELHOUSE_PLUGIN
    _plugin_wheel(directory / "deploy" / "wheels", name, dist, label)
    return directory


@dataclass(frozen=True)
class Build:
    """The images built from deploy/Dockerfile: the default target and ``dev``."""

    runtime: str
    dev: str
    base: Base
    settings: BuildSettings
