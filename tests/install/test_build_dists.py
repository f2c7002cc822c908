"""scripts/build-dists.sh: a checked sdist and wheel of the core and of every plugin, which a
fresh virtualenv installs from the wheelhouse alone, each plugin found through its entry point."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_build_dists_builds_every_distribution_and_they_install(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-dists.sh"), str(dist)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert built.returncode == 0, built.stderr
    plugins = sorted(p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    assert built.stdout.strip() == f"{len(plugins) + 1} distributions built and checked in {dist}"
    stems = {p.name.split("-")[0] for p in dist.glob("*.whl")}
    assert stems == {"kubesched", *(f"kubesched_{name}" for name in plugins)}
    assert len(list(dist.glob("*.tar.gz"))) == len(plugins) + 1

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    wheels = [str(p) for p in dist.glob("*.whl")]
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    installed = subprocess.run(
        [*pip, "--no-index", *wheels], capture_output=True, text=True, timeout=600
    )
    assert installed.returncode == 0, installed.stderr
    listed = subprocess.run(
        [
            str(python),
            "-c",
            "import json, importlib.metadata as m;"
            "print(json.dumps(sorted(e.name for e in m.entry_points(group='kubesched.plugins'))))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert "GangScheduling" in json.loads(listed.stdout)
    assert len(json.loads(listed.stdout)) == len(plugins)
