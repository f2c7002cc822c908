// Command kube-scheduler is the upstream kube-scheduler, built from the k8s.io/kubernetes
// version pinned in go.mod: the reference kubesched's parity tests and benchmarks compare against.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
