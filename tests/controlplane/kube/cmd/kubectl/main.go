// Command kubectl is the upstream kubectl, built from the k8s.io/kubernetes version pinned in
// go.mod, so that the deploy tests that apply manifests with kubectl run everywhere the control
// plane does.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
