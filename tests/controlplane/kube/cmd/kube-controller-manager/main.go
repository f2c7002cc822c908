// Command kube-controller-manager is the upstream kube-controller-manager, built from the
// k8s.io/kubernetes version pinned in go.mod. The tests run it with only the controllers the
// reference side needs (the PersistentVolume binder, the ResourceClaim controller).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
