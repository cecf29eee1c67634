// The test control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// fake kubelets, built from the Kubernetes project's own modules at one release. Test
// infrastructure only: no part of it is in the product. scripts/control-plane.sh is its entry.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // CronJobs' time zones, as kube-controller-manager ships them

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = `usage: dumbmonit-testenv COMMAND
  up DIR [--controllers LIST] [--no-kubelets] [--nodes N] [--while-pid PID]
                       etcd, the API server, the controllers, the scheduler and the fake
                       kubelets, until SIGTERM (SIGUSR1 stops the API server, SIGUSR2 starts it)
  load DIR FILE        create a List's objects, then write their statuses
  compact DIR          compact etcd at its current revision
  apiserver|controller-manager|scheduler ARGS
                       one component, as its own command line takes it`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	name, args := os.Args[1], os.Args[2:]
	// Each component reads its flags from os.Args through cobra.
	os.Args = append([]string{os.Args[0]}, args...)
	var err error
	switch name {
	case "apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "up":
		err = runUp(args)
	case "load":
		err = runLoad(args)
	case "compact":
		err = runCompact(args)
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dumbmonit-testenv:", err)
		os.Exit(1)
	}
}
