#!/usr/bin/env bash
# The custom-scheduler image's install steps, in one place: deploy/Dockerfile runs this script in
# its build stage, and tests/deploy/test_deploy_install.py runs it into a temporary directory, so
# what the image gets is what the tests run.
#
#   install-kubesched.sh SOURCE PREFIX [REQUIREMENT...]
#
#   SOURCE       a kubesched checkout: pyproject.toml, core/ and plugins/<name>/pyproject.toml
#   PREFIX       the virtualenv to create (the image's is /opt/kubesched)
#   REQUIREMENT  extra pip requirements, e.g. third-party plugins: "acme-kubesched-nodepool==1.2.3"
#                (the image's PLUGINS build argument); local paths and pip options work too
#
# Builds a wheel of the core and of every bundled plugin, installs them with their dependencies
# pinned by deploy/constraints.txt (copied to PREFIX/constraints.txt), then checks that every
# installed plugin imports and that the shipped profile is valid. The interpreter is $PYTHON
# (default python3); pip's own environment variables (PIP_INDEX_URL, PIP_NO_CACHE_DIR, ...) apply.
set -euo pipefail
set -f # requirement specifiers such as "pkg[extra]" are not file patterns

if [[ $# -lt 2 ]]; then
    echo "usage: install-kubesched.sh SOURCE PREFIX [REQUIREMENT...] (see the top of $0)" >&2
    exit 2
fi
source_dir="$(cd "$1" && pwd)"
prefix="$2"
shift 2
python="${PYTHON:-python3}"
# An empty pip setting means pip's default (the Dockerfile passes its build arguments as set or
# empty): unset, so that no pip version reads "" as a value.
for setting in PIP_INDEX_URL PIP_DEFAULT_TIMEOUT PIP_CERT PIP_FIND_LINKS; do
    if [[ -v $setting && -z "${!setting}" ]]; then
        unset "$setting"
    fi
done

if [[ ! -f "$source_dir/pyproject.toml" || ! -d "$source_dir/plugins" ]]; then
    echo "install-kubesched.sh: $source_dir is not a kubesched checkout" \
        "(no pyproject.toml and plugins/)" >&2
    exit 2
fi
if [[ -e "$prefix" ]]; then
    echo "install-kubesched.sh: $prefix exists; give a new directory" >&2
    exit 2
fi

set +f
projects=("$source_dir")
for pyproject in "$source_dir"/plugins/*/pyproject.toml; do
    projects+=("$(dirname "$pyproject")")
done
set -f

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
wheels="$work/wheels"

"$python" -m venv "$prefix"
pip=("$prefix/bin/python" -m pip --disable-pip-version-check --no-input)

# One throw-away build environment for all the wheels (pip's per-project build isolation would
# install the build backend once per project), holding the union of the projects' build-system
# requirements, pinned like everything else; the new environment's pip works on it.
"$python" -m venv --without-pip "$work/build"
build_pip=("${pip[@]}" --python "$work/build/bin/python")
mapfile -t build_requires < <("$work/build/bin/python" -c '
import sys, tomllib
wanted = set()
for project in sys.argv[1:]:
    with open(f"{project}/pyproject.toml", "rb") as f:
        wanted.update(tomllib.load(f).get("build-system", {}).get("requires", ["setuptools"]))
print(*sorted(wanted), sep="\n")' "${projects[@]}")
constraints="$source_dir/deploy/constraints.txt"
"${build_pip[@]}" install --quiet --constraint "$constraints" "${build_requires[@]}"
echo "building ${#projects[@]} wheels: the core and $((${#projects[@]} - 1)) bundled plugins"
"${build_pip[@]}" wheel --quiet --no-deps --no-build-isolation --wheel-dir "$wheels" \
    "${projects[@]}"

set +f
built=("$wheels"/*.whl)
set -f
echo "installing into $prefix${*:+ with: $*}"
"${pip[@]}" install --quiet --constraint "$constraints" "${built[@]}" "$@"
# Kept with the install: the image points PIP_CONSTRAINT at it, so that a derived image's
# `pip install` keeps these versions too.
cp "$constraints" "$prefix/constraints.txt"

# A plugin that cannot be imported, or a profile the installed plugins cannot run, fails the
# build here rather than the pod at start-up.
"$prefix/bin/kubesched" plugins
"$prefix/bin/kubesched" plugins -o json | "$prefix/bin/python" -c '
import json, sys
broken = [plugin["error"] for plugin in json.load(sys.stdin) if "error" in plugin]
print(*broken, sep="\n", file=sys.stderr)
sys.exit(1 if broken else 0)'
"$prefix/bin/kubesched" config validate "$source_dir/deploy/scheduler-config.yaml"
