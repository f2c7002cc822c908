#!/usr/bin/env bash
# Build etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kubectl for kubesched's
# integration tests.
#
# The binaries go to a cache outside the repository, keyed by the pinned versions:
#   ${KUBESCHED_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/kubesched/controlplane}/k8s-vX.Y.Z-etcd-vA.B.C/
# and are reused while what made them (this script, go.mod, go.sum, main.go files) is unchanged.
# The last line on stdout is that directory; everything else goes to stderr and to build.log in it.
#
# Usage: build.sh [--print-dir] [--force]
#   --print-dir  print the cache directory and exit (nothing is built)
#   --force      rebuild even if the cached binaries are current
# Exit codes: 0 built or reused, 1 the build failed, 2 bad arguments, 3 Go is not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kube_mod="$here/kube"
etcd_mod="$here/etcd"

die() { # die <message> [exit code]
    echo "build.sh: error: $1" >&2
    exit "${2:-1}"
}

print_dir=0
force=0
for arg in "$@"; do
    case "$arg" in
        --print-dir) print_dir=1 ;;
        --force) force=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) die "unknown argument '$arg' (expected --print-dir or --force)" 2 ;;
    esac
done

# The versions come from the go.mod files, so that pinning a new release is a one-line change there.
required_version() { # required_version <go.mod> <module>: its version in a require line or block
    awk -v m="$2" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}
k8s_version="$(required_version "$kube_mod/go.mod" k8s.io/kubernetes)"
etcd_version="$(required_version "$etcd_mod/go.mod" go.etcd.io/etcd/server/v3)"
[[ -n "$k8s_version" && -n "$etcd_version" ]] ||
    die "cannot read the k8s.io/kubernetes or go.etcd.io/etcd/server/v3 version from $here/*/go.mod"

cache_root="${KUBESCHED_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubesched/controlplane}"
out="$cache_root/k8s-$k8s_version-etcd-$etcd_version"

if ((print_dir)); then
    echo "$out"
    exit 0
fi

binaries=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl)

# What the binaries were built from; a change means a rebuild. This script counts without its
# comments, so that its flags matter and its documentation does not.
stamp_of_sources() {
    (
        cd "$here"
        echo "$(grep -v '^[[:space:]]*#' build.sh | sha256sum | cut -d' ' -f1)  build.sh without comments"
        sha256sum kube/go.mod kube/go.sum kube/cmd/*/main.go etcd/go.mod etcd/go.sum etcd/main.go
    )
}

is_current() {
    local b
    for b in "${binaries[@]}"; do
        [[ -x "$out/$b" ]] || return 1
    done
    [[ -f "$out/sources.sha256" ]] && [[ "$(cat "$out/sources.sha256")" == "$(stamp_of_sources)" ]]
}

if ((!force)) && is_current; then
    echo "build.sh: reusing $out" >&2
    echo "$out"
    exit 0
fi

# Exit code 3 tells callers (kubesched.testing.controlplane) that Go, not the build, is missing.
command -v go >/dev/null 2>&1 ||
    die "Go is not installed (no 'go' on PATH): install Go >= 1.26 to build the control plane, or set KUBESCHED_TEST_KUBECONFIG to use an existing cluster" 3

mkdir -p "$cache_root"

# One build at a time per cache root: a second caller waits, then finds the binaries current.
exec 9>"$cache_root/.build.lock"
if command -v flock >/dev/null 2>&1; then
    if ! flock --nonblock 9; then
        echo "build.sh: another build holds $cache_root/.build.lock; waiting for it" >&2
        flock 9
    fi
    if ((!force)) && is_current; then
        echo "build.sh: reusing $out" >&2
        echo "$out"
        exit 0
    fi
fi

# Build into a scratch directory and move it into place at the end, so that an interrupted build
# never leaves a directory that looks complete.
work="$(mktemp -d "$cache_root/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
log="$work/build.log"

export CGO_ENABLED=0
# -mod=readonly: the committed go.sum must be complete; a build never edits the repository.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
# No VCS stamp: the binaries depend on the pinned modules only, not on this repository's state.
build_flags=(-trimpath -buildvcs=false)
# The version stamp upstream's hack/lib/version.sh writes, so that /version, the binaries'
# --version and client user agents say v1.X.Y instead of v0.0.0-master.
k8s_minor="${k8s_version#v1.}"
k8s_minor="${k8s_minor%%.*}"
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
    k8s_ldflags+=" -X $pkg.gitTreeState=clean"
done

started=$SECONDS
{
    echo "# kubesched control plane build, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# k8s.io/kubernetes $k8s_version, go.etcd.io/etcd/server/v3 $etcd_version"
    echo "# $(go version), GOFLAGS=$GOFLAGS, GOTOOLCHAIN=$(go env GOTOOLCHAIN), GOPROXY=$(go env GOPROXY)"
} >"$log"
echo "build.sh: building k8s $k8s_version and etcd $etcd_version into $out (log: $out/build.log)" >&2

build() { # build <name> <module dir> <ldflags> <package>...
    local name="$1" dir="$2" ldflags="$3"
    shift 3
    local t=$SECONDS
    echo "## go build $name" >>"$log"
    if ! (cd "$dir" && go build -v "${build_flags[@]}" -ldflags="$ldflags" -o "$work/" "$@") >>"$log" 2>&1; then
        local saved="$cache_root/build-failed.log"
        cp "$log" "$saved"
        die "building $name failed after $((SECONDS - t))s; see $saved (last line: $(tail -n 1 "$log"))"
    fi
    echo "## $name built in $((SECONDS - t))s" >>"$log"
}

build etcd "$etcd_mod" "-s -w" .
build "kube-apiserver, kube-scheduler, kube-controller-manager and kubectl" "$kube_mod" "$k8s_ldflags" \
    ./cmd/kube-apiserver ./cmd/kube-scheduler ./cmd/kube-controller-manager ./cmd/kubectl

elapsed=$((SECONDS - started))
{
    echo "# built in ${elapsed}s"
    for b in "${binaries[@]}"; do
        echo "# $b $(stat -c %s "$work/$b") bytes"
    done
} >>"$log"
stamp_of_sources >"$work/sources.sha256"

rm -rf "$out"
mv "$work" "$out"
trap - EXIT
chmod 755 "$out"
echo "build.sh: built in ${elapsed}s: $(cd "$out" && du -h "${binaries[@]}" | awk '{printf "%s %s  ", $2, $1}')" >&2
echo "$out"
