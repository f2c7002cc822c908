#!/usr/bin/env bash
# The custom-scheduler runtime image's virtualenv: what deploy/install-kubesched.sh made, less
# what the scheduler never runs. deploy/Dockerfile runs this on a copy of the virtualenv for the
# default target; its `dev` target keeps the whole virtualenv for derived images that add plugins.
#
#   prune-runtime.sh PREFIX
#
# Removes, in place:
#   - pip, setuptools, wheel (and pkg_resources, _distutils_hack): installing tools; a derived
#     image that installs plugins starts from the `dev` target, which has them
#   - kubernetes.aio, the official client's asyncio twin (~68 MB), and what only it imports:
#     aiohttp and its dependencies; kubesched uses the synchronous client
#   - test modules shipped inside distributions (tests/ and test/ packages, *_test.py, test_*.py)
#   - the sources of the official client's generated models and API classes (33 MB): they are
#     compiled to bytecode in place (sourceless, as `compileall -b` writes it) and the sources
#     go; the client imports them all at start-up, so the bytecode stays either way
#   - cel-expr-python's extensions no kubesched code loads (encoders, math, proto: 18.6 MB of
#     native code); DynamicResources' CEL environment uses bindings, optional and strings only
# with their compiled files and installed-file records, and fails if anything kubesched or a
# bundled plugin imports is gone.
set -euo pipefail

if [[ $# -ne 1 || ! -x "$1/bin/python" ]]; then
    echo "usage: prune-runtime.sh PREFIX (a virtualenv made by install-kubesched.sh)" >&2
    exit 2
fi
prefix="$1"
python="$prefix/bin/python"
site="$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"

# Distributions the scheduler does not run, by name: their files as their RECORD lists them.
"$python" - "$site" <<'EOF'
import shutil
import sys
from importlib import metadata
from pathlib import Path

site = Path(sys.argv[1])
unused = {
    # installing tools
    "pip", "setuptools", "wheel",
    # what only kubernetes.aio imports
    "aiohttp", "aiohttp-retry", "aiohappyeyeballs", "aiosignal", "frozenlist", "multidict",
    "propcache", "yarl",
}
for dist in metadata.distributions(path=[str(site)]):
    name = dist.metadata["Name"].lower().replace("_", "-")
    if name not in unused:
        continue
    version = dist.version
    for file in dist.files or ():
        path = Path(dist.locate_file(file)).resolve()
        if site in path.parents:
            path.unlink(missing_ok=True)
    shutil.rmtree(Path(dist._path), ignore_errors=True)  # the .dist-info itself
    print(f"removed {name} {version}")
EOF
# Whatever the records missed, and the bytecode and console scripts of what is gone.
rm -rf "$site"/{pip,setuptools,wheel,pkg_resources,_distutils_hack,aiohttp} \
    "$site"/distutils-precedence.pth "$prefix"/bin/pip* "$prefix"/bin/wheel
rm -rf "$site/kubernetes/aio"
rm -f "$site"/cel_expr_python/ext/ext_{encoders,math,proto}.*
for generated in "$site"/kubernetes/client/models "$site"/kubernetes/client/api; do
    [[ -d "$generated" ]] || continue
    "$python" -m compileall -q -b -j 0 "$generated" >/dev/null
    find "$generated" -name '*.py' -delete
    find "$generated" -depth -type d -name __pycache__ -exec rm -rf {} +
done
find "$site" -depth -type d \( -name tests -o -name test \) -exec rm -rf {} +
find "$site" -type f \( -name '*_test.py' -o -name 'test_*.py' \) -delete
find "$site" -type f -path '*/__pycache__/*' \( -name '*_test.*.pyc' -o -name 'test_*.pyc' \) -delete
find "$site" -depth -type d -empty -delete

# Everything the scheduler imports is still there: the core, every installed plugin, the client.
# (Through this prefix's python: the console scripts of a copy still name the original's.)
"$python" -m kubesched plugins -o json | "$python" -c '
import json, sys
broken = [plugin["error"] for plugin in json.load(sys.stdin) if "error" in plugin]
if broken:
    sys.exit("\n".join(broken))'
"$python" -c '
import importlib, pkgutil, kubernetes, kubesched
for module in pkgutil.walk_packages(kubesched.__path__, "kubesched."):
    # kubesched.testing: test helpers (pytest, cryptography); __main__ would run the CLI
    if not module.name.startswith(("kubesched.testing", "kubesched.__main__")):
        importlib.import_module(module.name)
for name in ("bindings", "optional", "strings"):  # what DynamicResources CEL environment loads
    try:
        importlib.import_module(f"cel_expr_python.ext.ext_{name}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("cel_expr_python.ext."):
            raise'
du -sh "$prefix" | sed 's/\t/  /'
