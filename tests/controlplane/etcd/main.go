// Command etcd is the upstream etcd server, built from the go.etcd.io/etcd/server/v3 version
// pinned in go.mod, that backs kube-apiserver in kubesched's integration tests and benchmarks.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
