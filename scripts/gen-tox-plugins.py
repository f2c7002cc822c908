"""Print the plugin lines of tox.ini and requirements-dev.txt for every package under plugins/.

Run after adding a plugin package: ``python scripts/gen-tox-plugins.py`` rewrites both files'
generated sections, so no plugin is left out of the test matrix.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "# -- generated plugin list (scripts/gen-tox-plugins.py) --"
END = "# -- end of generated --"


def plugins(folder: str = "plugins") -> list[str]:
    """Plugin packages that git tracks (a package not yet added would break a clean clone)."""
    tracked = subprocess.run(
        ["git", "ls-files", f"{folder}/*/pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(Path(path).parent.name for path in tracked)


def replace_block(text: str, block: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    return pattern.sub(lambda _m: f"{BEGIN}\n{block}{END}", text)


def main() -> None:
    names = plugins()
    examples = plugins("examples")
    factors = ",".join(names)
    example_factors = ",".join(examples)
    tox = ROOT / "tox.ini"
    block = (
        "[tox]\nrequires =\n    tox>=4\n    tox-uv>=1.11\n"
        f"env_list = lint, core, plugin-{{{factors}}}, example-{{{example_factors}}}, e2e, "
        "integration, parity, deploy, image, bench, fuzz, security, reliability\n\n"
        f"[testenv:plugin-{{{factors}}}]\n"
        "description = one plugin with only the core installed\n"
        "deps =\n    pytest>=8\n    -e {toxinidir}\n"
        + "".join(f"    {n}: -e {{toxinidir}}/plugins/{n}\n" for n in names)
        + "change_dir =\n"
        + "".join(f"    {n}: {{toxinidir}}/plugins/{n}\n" for n in names)
        + "commands = pytest -q -p no:cacheprovider {posargs} tests\n\n"
        f"[testenv:example-{{{example_factors}}}]\n"
        "description = an example third-party plugin with only the core installed\n"
        "deps =\n    pytest>=8\n    -e {toxinidir}\n"
        + "".join(f"    {n}: -e {{toxinidir}}/examples/{n}\n" for n in examples)
        + "change_dir =\n"
        + "".join(f"    {n}: {{toxinidir}}/examples/{n}\n" for n in examples)
        + "commands = pytest -q -p no:cacheprovider {posargs} tests\n\n"
        "[all-plugins]\ndeps =\n" + "".join(f"    -e {{toxinidir}}/plugins/{n}\n" for n in names)
    )
    tox.write_text(replace_block(tox.read_text(), block))
    reqs = ROOT / "requirements-dev.txt"
    reqs.write_text(
        "# The core and every bundled plugin, editable: "
        "`python -m pip install -r requirements-dev.txt`.\n-e .\n"
        + "".join(f"-e plugins/{n}\n" for n in names)
    )


if __name__ == "__main__":
    main()
