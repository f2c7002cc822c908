"""mypy over the core and every plugin package (the lint env runs it).

Each plugin package is checked as its own top-level package, the core from ``core/``, with the
settings in pyproject.toml's ``[tool.mypy]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def targets() -> list[str]:
    packages = [ROOT / "core" / "kubesched"]
    packages += sorted(p.parent for p in ROOT.glob("*/*/kubesched_*/__init__.py"))
    return [str(p.relative_to(ROOT)) for p in packages]


if __name__ == "__main__":
    sys.exit(subprocess.call([sys.executable, "-m", "mypy", *targets()], cwd=ROOT))
