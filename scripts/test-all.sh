#!/usr/bin/env bash
# Every test of every package: lint, the core, each plugin alone, the CLI and installation tests,
# and the integration tests against a real kube-apiserver (its binaries are built once from Go
# modules and cached outside the repository; see tests/controlplane/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check 'tox>=4' 2>&1 | grep -v 'WARNING: Running pip as' || true
if command -v go >/dev/null 2>&1; then
    bash tests/controlplane/build.sh >/dev/null
fi
exec python3 -m tox run "$@"
