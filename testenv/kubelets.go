package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// What a test asks of the fake kubelets, by annotation.
const (
	// On a pod (or a pod template): crashloop, image-pull, pending, not-ready, fail, succeed.
	annBehaviour = "testenv.dumbmonit.io/behaviour"
	// On a pod: the name of a node where it stays Pending (a DaemonSet missing one node).
	annPendingOn = "testenv.dumbmonit.io/pending-on"
	// On a pod: the exit code of a crash-looping or failing container (default 1).
	annExitCode = "testenv.dumbmonit.io/exit-code"
	// On a node: "false" makes it report Ready=False.
	annNodeReady = "testenv.dumbmonit.io/ready"
	// On a node: memory, disk or pid (comma-separated) under pressure.
	annNodePressure = "testenv.dumbmonit.io/pressure"
	// On a node: "pending" starts no pod there (they stay Pending, ContainerCreating).
	annNodePods = "testenv.dumbmonit.io/pods"
)

// kubelets stands in for the kubelets of a few nodes: it registers the Nodes, keeps their
// leases and conditions fresh, and gives every pod bound to them the status a kubelet would
// write (through the status subresource), as its annotations ask. No container runs.
type kubelets struct {
	client  kubernetes.Interface
	nodes   []string
	mu      sync.Mutex
	written map[string]string // pod uid -> the state last written
	events  map[string]bool   // pod uid + reason -> the Warning event was sent
	deleted map[string]bool   // pod uid -> force-deleted after its grace period
	ips     map[string]string // pod uid -> its IP
	next    int
}

func newKubelets(client kubernetes.Interface, n int) *kubelets {
	k := &kubelets{client: client, written: map[string]string{}, events: map[string]bool{}, deleted: map[string]bool{}, ips: map[string]string{}}
	for i := 0; i < n; i++ {
		k.nodes = append(k.nodes, fmt.Sprintf("node-%d", i))
	}
	return k
}

func (k *kubelets) ours(node string) bool {
	for _, n := range k.nodes {
		if n == node {
			return true
		}
	}
	return false
}

func (k *kubelets) run(ctx context.Context) {
	for _, name := range k.nodes {
		if err := k.register(ctx, name); err != nil {
			fmt.Printf("kubelets: registering %s: %v\n", name, err)
		}
	}
	factory := informers.NewSharedInformerFactory(k.client, 0)
	pods := factory.Core().V1().Pods().Informer()
	pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { k.pod(ctx, o.(*corev1.Pod), nodeLister(factory)) },
		UpdateFunc: func(_, o interface{}) { k.pod(ctx, o.(*corev1.Pod), nodeLister(factory)) },
	})
	nodes := factory.Core().V1().Nodes().Informer()
	nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, o interface{}) {
			before, after := old.(*corev1.Node), o.(*corev1.Node)
			if k.ours(after.Name) && !sameAnnotations(before, after) {
				k.heartbeat(ctx, after.Name)
				for _, p := range podsOn(factory, after.Name) {
					k.pod(ctx, p, nodeLister(factory))
				}
			}
		},
	})
	factory.Start(ctx.Done())
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			for _, name := range k.nodes {
				k.heartbeat(ctx, name)
			}
		}
	}
}

func sameAnnotations(a, b *corev1.Node) bool {
	for _, key := range []string{annNodeReady, annNodePressure, annNodePods} {
		if a.Annotations[key] != b.Annotations[key] {
			return false
		}
	}
	return true
}

func nodeLister(f informers.SharedInformerFactory) func(string) *corev1.Node {
	return func(name string) *corev1.Node {
		n, err := f.Core().V1().Nodes().Lister().Get(name)
		if err != nil {
			return nil
		}
		return n
	}
}

func podsOn(f informers.SharedInformerFactory, node string) []*corev1.Pod {
	all, _ := f.Core().V1().Pods().Lister().List(labels.Everything())
	var on []*corev1.Pod
	for _, p := range all {
		if p.Spec.NodeName == node {
			on = append(on, p)
		}
	}
	return on
}

func (k *kubelets) register(ctx context.Context, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: name,
		Labels: map[string]string{
			"kubernetes.io/hostname": name,
			"kubernetes.io/os":       "linux",
			"kubernetes.io/arch":     "amd64",
			"beta.kubernetes.io/os":  "linux",
		},
	}}
	if _, err := k.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := k.heartbeat(ctx, name); err != nil {
		return err
	}
	// Admission taints a new node not-ready until it says Ready; the node-lifecycle controller
	// lifts the taint then, and when it does not run this kubelet does it.
	n, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var kept []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			kept = append(kept, t)
		}
	}
	if len(kept) != len(n.Spec.Taints) {
		n.Spec.Taints = kept
		_, err = k.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	}
	return err
}

// heartbeat renews the node's lease and writes its conditions as its annotations ask.
func (k *kubelets) heartbeat(ctx context.Context, name string) error {
	now := metav1.NewMicroTime(time.Now())
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	duration := int32(40)
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &duration, RenewTime: &now},
		}, metav1.CreateOptions{})
	} else if err == nil {
		lease.Spec.RenewTime = &now
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	node, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	node.Status = nodeStatus(node, time.Now())
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func nodeStatus(node *corev1.Node, now time.Time) corev1.NodeStatus {
	pressure := map[string]bool{}
	for _, p := range strings.Split(node.Annotations[annNodePressure], ",") {
		pressure[strings.TrimSpace(p)] = true
	}
	ready := node.Annotations[annNodeReady] != "false"
	previous := map[corev1.NodeConditionType]corev1.NodeCondition{}
	for _, c := range node.Status.Conditions {
		previous[c.Type] = c
	}
	condition := func(t corev1.NodeConditionType, on bool, onReason, onMessage, offReason, offMessage string) corev1.NodeCondition {
		status, reason, message := corev1.ConditionFalse, offReason, offMessage
		if on {
			status, reason, message = corev1.ConditionTrue, onReason, onMessage
		}
		since := metav1.NewTime(now)
		if p, ok := previous[t]; ok && p.Status == status {
			since = p.LastTransitionTime
		}
		return corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message, LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: since}
	}
	readyCondition := condition(corev1.NodeReady, ready, "KubeletReady", "kubelet is posting ready status",
		"KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")
	return corev1.NodeStatus{
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("7800Mi"),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("95Gi"),
		},
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, pressure["memory"], "KubeletHasInsufficientMemory", "kubelet has insufficient memory available", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, pressure["disk"], "KubeletHasDiskPressure", "kubelet has disk pressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, pressure["pid"], "KubeletHasInsufficientPID", "kubelet has insufficient PID available", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			readyCondition,
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: node.Name}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: Release, OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "containerd://2.1.0", KernelVersion: "6.12.0", OSImage: "Debian GNU/Linux 12 (bookworm)",
			MachineID: fmt.Sprintf("%x", sha256.Sum256([]byte(node.Name)))[:32],
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}
}

// pod brings one pod bound to our nodes to the status its annotations ask for.
func (k *kubelets) pod(ctx context.Context, pod *corev1.Pod, nodes func(string) *corev1.Node) {
	if !k.ours(pod.Spec.NodeName) {
		return
	}
	uid := string(pod.UID)
	if pod.DeletionTimestamp != nil {
		// A kubelet stops the containers, then removes the pod at once; a finalizer keeps it.
		k.mu.Lock()
		done := k.deleted[uid]
		k.deleted[uid] = true
		k.mu.Unlock()
		if !done {
			zero := int64(0)
			err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				fmt.Printf("kubelets: deleting %s/%s: %v\n", pod.Namespace, pod.Name, err)
			}
		}
		return
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	behaviour := pod.Annotations[annBehaviour]
	if pod.Annotations[annPendingOn] == pod.Spec.NodeName {
		behaviour = "pending"
	}
	if node := nodes(pod.Spec.NodeName); node != nil && node.Annotations[annNodePods] == "pending" {
		behaviour = "pending"
	}
	exit := 1
	if v, err := strconv.Atoi(pod.Annotations[annExitCode]); err == nil {
		exit = v
	}
	state := fmt.Sprintf("%s/%d", behaviour, exit)
	k.mu.Lock()
	if k.written[uid] == state {
		k.mu.Unlock()
		return
	}
	ip, ok := k.ips[uid]
	if !ok {
		k.next++
		ip = fmt.Sprintf("10.244.%d.%d", (k.next/250)%250, k.next%250+2)
		k.ips[uid] = ip
	}
	k.mu.Unlock()

	now := time.Now()
	status := podStatus(pod, behaviour, int32(exit), ip, now)
	updated := pod.DeepCopy()
	updated.Status = status
	if _, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			fmt.Printf("kubelets: status of %s/%s: %v\n", pod.Namespace, pod.Name, err)
		}
		return
	}
	k.mu.Lock()
	k.written[uid] = state
	k.mu.Unlock()
	for _, e := range podEvents(pod, behaviour) {
		k.event(ctx, pod, e, now)
	}
}

type warning struct{ reason, message, container string }

func podEvents(pod *corev1.Pod, behaviour string) []warning {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	c := pod.Spec.Containers[0]
	switch behaviour {
	case "crashloop":
		return []warning{{"BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID), c.Name}}
	case "image-pull":
		return []warning{
			{"Failed", fmt.Sprintf("Failed to pull image %q: rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: not found", c.Image, c.Image, c.Image), c.Name},
			{"Failed", "Error: ImagePullBackOff", c.Name},
		}
	case "not-ready":
		return []warning{{"Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", c.Name}}
	}
	return nil
}

func (k *kubelets) event(ctx context.Context, pod *corev1.Pod, w warning, now time.Time) {
	key := string(pod.UID) + "/" + w.reason + "/" + w.message
	k.mu.Lock()
	sent := k.events[key]
	k.events[key] = true
	k.mu.Unlock()
	if sent {
		return
	}
	t := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1",
			ResourceVersion: pod.ResourceVersion, FieldPath: fmt.Sprintf("spec.containers{%s}", w.container),
		},
		Reason: w.reason, Message: w.message, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
		FirstTimestamp: t, LastTimestamp: t, Count: 1,
		ReportingController: "kubelet", ReportingInstance: pod.Spec.NodeName,
	}
	if _, err := k.client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		fmt.Printf("kubelets: event for %s/%s: %v\n", pod.Namespace, pod.Name, err)
	}
}

func podStatus(pod *corev1.Pod, behaviour string, exit int32, ip string, now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now)
	started := metav1.NewTime(now.Add(-10 * time.Minute))
	status := corev1.PodStatus{
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		StartTime: &started, QOSClass: pod.Status.QOSClass,
	}
	if pod.Status.StartTime != nil {
		status.StartTime = pod.Status.StartTime
	}
	phase, ready := corev1.PodRunning, true
	for _, c := range pod.Spec.InitContainers {
		status.InitContainerStatuses = append(status.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), ContainerID: containerID(pod, c.Name), Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: started}},
		})
	}
	for _, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), ContainerID: containerID(pod, c.Name)}
		yes := true
		switch behaviour {
		case "crashloop":
			cs.RestartCount = 5
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off 2m40s restarting failed container=%s pod=%s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID)}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error",
				StartedAt: metav1.NewTime(now.Add(-90 * time.Second)), FinishedAt: metav1.NewTime(now.Add(-80 * time.Second)), ContainerID: cs.ContainerID}
			cs.Started = new(bool)
			ready = false
		case "image-pull":
			cs.ImageID, cs.ContainerID = "", ""
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}
			cs.Started = new(bool)
			phase, ready = corev1.PodPending, false
		case "pending":
			cs.ImageID, cs.ContainerID = "", ""
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
			cs.Started = new(bool)
			phase, ready = corev1.PodPending, false
		case "not-ready":
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
			cs.Started = &yes
			ready = false
		case "fail":
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID}
			cs.Started = new(bool)
			phase, ready = corev1.PodFailed, false
		case "succeed":
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID}
			cs.Started = new(bool)
			phase, ready = corev1.PodSucceeded, false
		default:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
			cs.Started = &yes
		}
		cs.Ready = ready && cs.State.Running != nil
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
	status.Phase = phase
	cond := func(typ corev1.PodConditionType, on bool, reason, message string) corev1.PodCondition {
		s := corev1.ConditionFalse
		if on {
			s = corev1.ConditionTrue
			reason, message = "", ""
		}
		return corev1.PodCondition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: t}
	}
	unready := make([]string, 0)
	for _, cs := range status.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	notReadyMessage := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	done := phase == corev1.PodSucceeded || phase == corev1.PodFailed
	reason := "ContainersNotReady"
	if done {
		reason = "PodCompleted"
	}
	sandbox := behaviour != "pending"
	status.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, sandbox && !done, "", ""),
		cond(corev1.PodInitialized, true, "", ""),
		cond(corev1.PodReady, len(unready) == 0, reason, notReadyMessage),
		cond(corev1.ContainersReady, len(unready) == 0, reason, notReadyMessage),
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			status.Conditions = append(status.Conditions, c)
		}
	}
	return status
}

func imageID(image string) string {
	return fmt.Sprintf("docker.io/library/%s@sha256:%x", strings.SplitN(image, ":", 2)[0], sha256.Sum256([]byte(image)))
}

func containerID(pod *corev1.Pod, name string) string {
	return fmt.Sprintf("containerd://%x", sha256.Sum256([]byte(string(pod.UID)+name)))
}

// waitReady waits until every node is registered and Ready.
func (k *kubelets) waitReady(ctx context.Context, limit time.Duration) error {
	return waitFor(ctx, limit, "the fake kubelets' nodes", func() bool {
		for _, name := range k.nodes {
			n, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			ready := false
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			for _, t := range n.Spec.Taints {
				if t.Key == corev1.TaintNodeNotReady {
					ready = false
				}
			}
			if !ready {
				return false
			}
		}
		return true
	})
}
