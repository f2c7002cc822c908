"""Every code block of docs/writing-plugins.md runs, in order, as a reader would run it.

Each block is preceded by a ``<!-- doc-test: KIND -->`` comment saying how it is exercised:

- ``file PATH``: the block is written to PATH (the guide's example plugin, profile, cluster);
- ``run`` (``run exit=N``): each line is a command, run in a fresh virtualenv holding a wheel of
  the core, from the guide's working directory; each must exit 0 (or N);
- ``python``: run as a script with the virtualenv's python, from the working directory;
- ``output``: the output of the previous ``run`` block's last command (or of the ``python``
  block), compared line by line.

The virtualenv sees this interpreter's packages through a .pth file (as in
tests/install/test_third_party_plugin.py); ``pip`` runs through this interpreter's pip with
``--python`` pointing at the virtualenv.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import site
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-plugins.md"
KINDS = ("file", "run", "output", "python")
_BLOCK = re.compile(
    r"(?:<!-- doc-test: (?P<directive>[^>]*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.DOTALL | re.MULTILINE,
)


@dataclass
class Block:
    line: int
    kind: str
    argument: str
    body: str


def blocks() -> list[Block]:
    text = GUIDE.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        kind, _, argument = (match.group("directive") or "").partition(" ")
        line = text.count("\n", 0, match.start("body"))
        found.append(Block(line, kind, argument, match.group("body")))
    return found


def test_every_code_block_says_how_it_is_tested():
    untested = [f"line {b.line}" for b in blocks() if b.kind not in KINDS]
    assert not untested, f"code blocks of {GUIDE.name} without a doc-test comment: {untested}"
    assert sum(b.kind == "run" for b in blocks()) >= 5


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def guide_env(tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv with a wheel of the core; and the guide's empty working directory."""
    base = tmp_path_factory.mktemp("guide")
    wheels = base / "wheels"
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), ROOT])
    assert built.returncode == 0, built.stderr
    venv.EnvBuilder(with_pip=False).create(base / "venv")
    python = base / "venv" / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    deps = [p for p in {*site.getsitepackages(), site.getusersitepackages()} if Path(p).is_dir()]
    lines = [f"import site; site.addsitedir({d!r})" for d in deps]
    Path(purelib.stdout.strip(), "_kubesched_test_deps.pth").write_text("\n".join(lines) + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    installed = run([*pip, "--ignore-installed", *map(str, wheels.glob("kubesched-*.whl"))])
    assert installed.returncode == 0, installed.stderr
    work = base / "work"
    work.mkdir()
    # The guide's CI section installs from a wheelhouse that scripts/build-dists.sh builds
    # (tests/install/test_build_dists.py builds it); the core's wheel stands in for it here.
    shutil.copytree(wheels, work / "wheelhouse")
    return base / "venv", work


def command(env: Path, line: str) -> list[str]:
    """A guide's command line as this test runs it in the virtualenv."""
    words = shlex.split(line)
    if words[:3] == ["python", "-m", "pip"]:
        words = words[2:]
    if words[0] == "pip":
        return [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), *words[1:]]
    if words[0] == "pytest":
        return [str(env / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", *words[1:]]
    if words[0] in ("python", "kubesched"):
        return [str(env / "bin" / words[0]), *words[1:]]
    raise AssertionError(f"the guide runs {words[0]!r}, which this test does not know")


def test_every_code_block_runs(guide_env):
    env, work = guide_env
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    last: subprocess.CompletedProcess[str] | None = None
    for block in blocks():
        where = f"{GUIDE.name} line {block.line}"
        if block.kind == "file":
            path = work / block.argument
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.body)
        elif block.kind == "python":
            script = work / f"guide_line_{block.line}.py"
            script.write_text(block.body)
            last = run([str(env / "bin" / "python"), str(script)], cwd=work, env=environ)
            assert last.returncode == 0, f"{where}:\n{last.stdout}\n{last.stderr}"
        elif block.kind == "run":
            expected = int(block.argument.partition("exit=")[2] or 0)
            for line in filter(None, (ln.strip() for ln in block.body.splitlines())):
                last = run(command(env, line), cwd=work, env=environ)
                assert last.returncode == expected, (
                    f"{where}: `{line}` exited {last.returncode}\n{last.stdout}\n{last.stderr}"
                )
        elif block.kind == "output":
            assert last is not None, f"{where}: an output block must follow a run or python block"
            shown = (last.stdout + last.stderr).rstrip().splitlines()
            expected_lines = [ln.rstrip() for ln in block.body.rstrip().splitlines()]
            assert [ln.rstrip() for ln in shown] == expected_lines, where
