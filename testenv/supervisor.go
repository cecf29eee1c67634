package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Release is the Kubernetes release this program is built from; the build sets the API
// server's /version to the same (scripts/control-plane.sh, -ldflags).
const Release = "v1.37.2"

type upOptions struct {
	dir         string
	controllers string
	kubelets    bool
	nodes       int
	whilePID    int
}

// plane is the running control plane: embedded etcd and the components as child processes of
// this program (each under its own name: apiserver, controller-manager, scheduler).
type plane struct {
	opts     upOptions
	self     string
	etcd     *embed.Etcd
	etcdURL  string
	port     int
	token    string
	mu       sync.Mutex
	children map[string]*exec.Cmd
	exited   map[string]chan struct{}
}

func runUp(args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var o upOptions
	fs.StringVar(&o.controllers, "controllers", "*", "kube-controller-manager's --controllers, or none")
	noKubelets := fs.Bool("no-kubelets", false, "leave the fake kubelets (and the scheduler) out")
	fs.IntVar(&o.nodes, "nodes", 2, "how many nodes the fake kubelets keep")
	fs.IntVar(&o.whilePID, "while-pid", 0, "stop when this process is gone")
	if len(args) < 1 {
		return errors.New("usage: up DIR [--controllers LIST] [--no-kubelets] [--nodes N] [--while-pid PID]")
	}
	o.dir = args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	o.kubelets = !*noKubelets
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	o.dir = dir
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p := &plane{opts: o, self: self, children: map[string]*exec.Cmd{}, exited: map[string]chan struct{}{}}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	err = p.start(ctx)
	if err == nil {
		if werr := os.WriteFile(filepath.Join(dir, "ready"), []byte("ready\n"), 0o644); werr != nil {
			err = werr
		}
	}
	if err != nil {
		os.WriteFile(filepath.Join(dir, "failed"), []byte(err.Error()+"\n"), 0o644)
		p.stop()
		return err
	}
	orphaned := p.serve(ctx)
	p.stop()
	if orphaned {
		// The process it was tied to is gone, and with it whoever would have removed DIR.
		return os.RemoveAll(dir)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *plane) path(parts ...string) string {
	return filepath.Join(append([]string{p.opts.dir}, parts...)...)
}

func (p *plane) start(ctx context.Context) error {
	for _, d := range []string{p.opts.dir, p.path("logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(p.path("pid"), []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
		return err
	}
	if err := makeCertificates(p.opts.dir); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	if err := p.writeCredentials(); err != nil {
		return err
	}
	if err := p.startEtcd(); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p.port = port
	if err := p.startAPIServer(ctx); err != nil {
		return err
	}
	config := p.adminConfig()
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	serviceAccounts := p.opts.controllers != "none" && controllerEnabled(p.opts.controllers, "serviceaccount")
	if p.opts.controllers != "none" {
		args, err := p.controllerManagerArgs()
		if err != nil {
			return err
		}
		if err := p.spawn("controller-manager", args); err != nil {
			return err
		}
	}
	if p.opts.kubelets {
		args, err := p.clientArgs("scheduler")
		if err != nil {
			return err
		}
		if err := p.spawn("scheduler", args); err != nil {
			return err
		}
		k := newKubelets(client, p.opts.nodes)
		go k.run(ctx)
		if err := k.waitReady(ctx, 90*time.Second); err != nil {
			return err
		}
	}
	if serviceAccounts {
		if err := waitFor(ctx, 90*time.Second, "the default ServiceAccount", func() bool {
			_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil
		}); err != nil {
			return err
		}
	}
	host := "localhost"
	if addrs, err := net.LookupHost(TestHost); err == nil && len(addrs) > 0 && addrs[0] == "127.0.0.1" {
		host = TestHost
	}
	address := fmt.Sprintf("https://%s:%d", host, p.port)
	if err := os.WriteFile(p.path("address"), []byte(address+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(p.path("kubeconfig"), []byte(kubeconfig(address, p.path("ca.crt"), p.token)), 0o600); err != nil {
		return err
	}
	return nil
}

// writeCredentials writes the static token file the API server reads (the admin, and the
// controller-manager and scheduler under their own well-known users, which the bootstrap
// RBAC policy binds) and the admin token on its own.
func (p *plane) writeCredentials() error {
	p.token = randomToken()
	kcm, sched := randomToken(), randomToken()
	csv := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,system:kube-controller-manager,kcm\n%s,system:kube-scheduler,scheduler\n", p.token, kcm, sched)
	if err := os.WriteFile(p.path("pki", "tokens.csv"), []byte(csv), 0o600); err != nil {
		return err
	}
	// The control plane's own components are left out of the audit log.
	policy := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    users: ["admin", "system:kube-controller-manager", "system:kube-scheduler", "system:apiserver"]
  - level: None
    userGroups: ["system:nodes"]
  - level: Metadata
`
	if err := os.WriteFile(p.path("pki", "audit-policy.yaml"), []byte(policy), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(p.path("admin.token"), []byte(p.token), 0o600); err != nil {
		return err
	}
	for name, token := range map[string]string{"controller-manager": kcm, "scheduler": sched} {
		if err := os.WriteFile(p.path("pki", name+".token"), []byte(token), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func kubeconfig(server, caFile, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: testenv
  user:
    token: %s
contexts:
- name: testenv
  context:
    cluster: testenv
    user: testenv
current-context: testenv
`, server, caFile, token)
}

func (p *plane) componentKubeconfig(name string) (string, error) {
	token, err := os.ReadFile(p.path("pki", name+".token"))
	if err != nil {
		return "", err
	}
	path := p.path("pki", name+".kubeconfig")
	server := fmt.Sprintf("https://127.0.0.1:%d", p.port)
	return path, os.WriteFile(path, []byte(kubeconfig(server, p.path("ca.crt"), string(token))), 0o600)
}

func (p *plane) startEtcd() error {
	client, err := freePort()
	if err != nil {
		return err
	}
	peer, err := freePort()
	if err != nil {
		return err
	}
	clientURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", client))
	peerURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peer))
	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = p.path("etcd")
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = fmt.Sprintf("testenv=%s", peerURL)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{p.path("logs", "etcd.log")}
	// A test cluster needs no durability across a crash of the machine.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return errors.New("etcd did not become ready in 60 s")
	}
	p.etcd = e
	p.etcdURL = clientURL.String()
	return os.WriteFile(p.path("etcd.endpoint"), []byte(p.etcdURL+"\n"), 0o644)
}

func (p *plane) apiServerArgs() []string {
	pki := p.path("pki")
	args := []string{
		"--etcd-servers=" + p.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The kubernetes Service's endpoints may not be loopback: tests point in-cluster
		// clients at 127.0.0.1 themselves.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", p.port),
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--token-auth-file=" + filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--requestheader-client-ca-file=" + filepath.Join(pki, "front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + filepath.Join(pki, "front-proxy-client.crt"),
		"--proxy-client-key-file=" + filepath.Join(pki, "front-proxy-client.key"),
		// Every request as the server saw it, so tests can prove DumbMonit only reads.
		"--audit-policy-file=" + filepath.Join(pki, "audit-policy.yaml"),
		"--audit-log-path=" + p.path("logs", "audit.log"),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--profiling=false",
		"--v=1",
	}
	if p.opts.controllers == "none" || !controllerEnabled(p.opts.controllers, "serviceaccount") {
		// Without the serviceaccount controller no namespace gets its default ServiceAccount,
		// and the ServiceAccount admission plugin would refuse every pod for its lack.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	return args
}

// clientArgs are the flags kube-controller-manager and kube-scheduler share: their own
// kubeconfig (for the API and for checking their callers), no leader election, no serving port,
// and a client rate that keeps up with tests that create thousands of objects.
func (p *plane) clientArgs(name string) ([]string, error) {
	kc, err := p.componentKubeconfig(name)
	if err != nil {
		return nil, err
	}
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		"--v=1",
	}, nil
}

func (p *plane) controllerManagerArgs() ([]string, error) {
	args, err := p.clientArgs("controller-manager")
	return append(args,
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+p.path("pki", "sa.key"),
		"--root-ca-file="+p.path("ca.crt"),
		"--controllers="+p.opts.controllers,
	), err
}

// controllerEnabled says whether kube-controller-manager runs a controller under a
// --controllers list ("*" is every default one, "-name" leaves one out).
func controllerEnabled(list, name string) bool {
	on := false
	for _, c := range strings.Split(list, ",") {
		c = strings.TrimSpace(c)
		switch {
		case c == "*":
			on = true
		case c == name || c == name+"-controller":
			on = true
		case c == "-"+name || c == "-"+name+"-controller":
			return false
		}
	}
	return on
}

// spawn starts a component as a child process of this program, its output to logs/NAME.log.
func (p *plane) spawn(name string, args []string) error {
	log, err := os.OpenFile(p.path("logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.self, append([]string{name}, args...)...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.children[name] = cmd
	p.exited[name] = exited
	p.mu.Unlock()
	go func() {
		cmd.Wait()
		log.Close()
		close(exited)
	}()
	return nil
}

func (p *plane) kill(name string) {
	p.mu.Lock()
	cmd, exited := p.children[name], p.exited[name]
	delete(p.children, name)
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
	}
}

func (p *plane) startAPIServer(ctx context.Context) error {
	if err := p.spawn("apiserver", p.apiServerArgs()); err != nil {
		return err
	}
	if err := p.waitServing(ctx, 120*time.Second); err != nil {
		return err
	}
	return os.WriteFile(p.path("apiserver.state"), []byte("serving\n"), 0o644)
}

func (p *plane) adminConfig() *rest.Config {
	return &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", p.port),
		BearerToken:     p.token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: p.path("ca.crt")},
		QPS:             500,
		Burst:           1000,
	}
}

// waitServing waits for /readyz to answer 200 to the admin.
func (p *plane) waitServing(ctx context.Context, limit time.Duration) error {
	pem, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	readyz := fmt.Sprintf("https://127.0.0.1:%d/readyz", p.port)
	p.mu.Lock()
	exited := p.exited["apiserver"]
	p.mu.Unlock()
	died := false
	err = waitFor(ctx, limit, "the API server's /readyz", func() bool {
		select {
		case <-exited:
			died = true
			return true
		default:
		}
		req, _ := http.NewRequest("GET", readyz, nil)
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if died {
		return fmt.Errorf("kube-apiserver exited (see %s)", p.path("logs", "apiserver.log"))
	}
	return err
}

func waitFor(ctx context.Context, limit time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for {
		if ok() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not there after %s", what, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serve keeps the control plane up until a signal, or until the process it is tied to is
// gone. SIGUSR1 stops the API server (a test's outage) and SIGUSR2 starts it again on the
// same port; apiserver.state says which holds. It says whether the tied process is gone.
func (p *plane) serve(ctx context.Context) bool {
	toggles := make(chan os.Signal, 4)
	signal.Notify(toggles, syscall.SIGUSR1, syscall.SIGUSR2)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case s := <-toggles:
			if s == syscall.SIGUSR1 {
				p.kill("apiserver")
				os.WriteFile(p.path("apiserver.state"), []byte("stopped\n"), 0o644)
			} else {
				if err := p.startAPIServer(ctx); err != nil {
					os.WriteFile(p.path("apiserver.state"), []byte("failed: "+err.Error()+"\n"), 0o644)
				}
			}
		case <-tick.C:
			if p.opts.whilePID > 0 && syscall.Kill(p.opts.whilePID, 0) == syscall.ESRCH {
				return true
			}
		}
	}
}

func (p *plane) stop() {
	for _, name := range []string{"scheduler", "controller-manager", "apiserver"} {
		p.kill(name)
	}
	if p.etcd != nil {
		p.etcd.Close()
	}
	os.Remove(p.path("ready"))
}
