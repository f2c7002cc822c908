#!/usr/bin/env bash
# Build a checked sdist and wheel of the core and of every plugin under plugins/ into dist/
# (or the directory given as $1): a wheelhouse a third-party plugin's CI installs kubesched
# from, with `pip install --find-links dist kubesched kubesched-priority-sort ...`.
#
# "Checked": each wheel is built from its sdist (uv build's default), so a file the sdist leaves
# out fails the build; then every distribution must have exactly one sdist and one wheel of the
# same name and version, and every plugin's wheel must declare its kubesched.plugins entry point.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
python=${PYTHON:-python3}

packages=("$root")
while IFS= read -r pyproject; do
    packages+=("$root/$(dirname "$pyproject")")
done < <(git -C "$root" ls-files 'plugins/*/pyproject.toml')

if command -v uv >/dev/null; then
    build() { uv build --quiet --out-dir "$out" "$1"; }
else
    build() { "$python" -m build --outdir "$out" "$1" >/dev/null; }
fi
for package in "${packages[@]}"; do
    echo "building ${package#"$root"/}" >&2
    build "$package"
done

"$python" - "$out" "${packages[@]}" <<'PY'
import email.parser
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

out, packages = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
problems = []
for package in packages:
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    stem = f"{name.replace('-', '_')}-{version}"
    sdists = list(out.glob(f"{stem}.tar.gz"))
    wheels = list(out.glob(f"{stem}-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        problems.append(f"{name}: expected one sdist and one wheel of {version} in {out}")
        continue
    with tarfile.open(sdists[0]) as sdist:
        if f"{stem}/PKG-INFO" not in sdist.getnames():
            problems.append(f"{sdists[0].name}: no PKG-INFO")
    with zipfile.ZipFile(wheels[0]) as wheel:
        files = wheel.namelist()
        metadata = email.parser.Parser().parsestr(wheel.read(f"{stem}.dist-info/METADATA").decode())
        if (metadata["Name"], metadata["Version"]) != (name, version):
            problems.append(f"{wheels[0].name}: metadata says {metadata['Name']} {metadata['Version']}")
        points = project.get("entry-points", {}).get("kubesched.plugins", {})
        if points:
            entry_points = wheel.read(f"{stem}.dist-info/entry_points.txt").decode()
            for plugin in points:
                if f"{plugin} =" not in entry_points:
                    problems.append(f"{wheels[0].name}: no kubesched.plugins entry point {plugin}")
        if not any(f.endswith(".py") for f in files):
            problems.append(f"{wheels[0].name}: no Python modules")
if problems:
    print("build-dists: " + "\nbuild-dists: ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"{len(packages)} distributions built and checked in {out}")
PY
