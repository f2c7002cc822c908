#!/usr/bin/env bash
# Every test of every package: lint, the core, each plugin alone, the CLI and installation tests,
# and the integration tests against a real kube-apiserver (its binaries are built once from Go
# modules and cached outside the repository; see tests/controlplane/README.md).
# Arguments go to tox (e.g. `-e core`).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check 'tox>=4' 2>&1 | grep -v 'WARNING: Running pip as' || true
# Build (or reuse) the control plane first, so a broken build fails in one clear line. Without Go
# (and outside CI) the integration tests skip saying so; in CI a missing Go fails the run.
if [[ "${CI:-}" == "true" ]] || command -v go >/dev/null 2>&1; then
    bash tests/controlplane/build.sh >/dev/null
fi
exec python3 -m tox run "$@"
