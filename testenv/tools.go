package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// configFrom is the admin's client configuration of a running control plane's directory.
func configFrom(dir string) (*rest.Config, error) {
	address, err := os.ReadFile(filepath.Join(dir, "address"))
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host:            strings.TrimSpace(string(address)),
		BearerToken:     strings.TrimSpace(string(token)),
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, "ca.crt")},
		QPS:             1000,
		Burst:           2000,
	}, nil
}

// runCompact compacts etcd at its current revision as kube-apiserver's own compactor does:
// compact_rev_key first (the API server's watch cache learns of the compaction from it, and
// drops the snapshots older than it within its poll period), then etcd itself. Every continue
// token handed out before is then too old: the API server answers 410 Gone.
func runCompact(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: compact DIR")
	}
	endpoint, err := os.ReadFile(filepath.Join(args[0], "etcd.endpoint"))
	if err != nil {
		return err
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{strings.TrimSpace(string(endpoint))}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const key = "compact_rev_key"
	got, err := client.Get(ctx, key)
	if err != nil {
		return err
	}
	var version int64
	if len(got.Kvs) > 0 {
		version = got.Kvs[0].Version
	}
	// The put of compact_rev_key is itself a write, one past every token handed out so far:
	// compacting at it leaves none of them readable (a compaction keeps its own revision).
	rev := got.Header.Revision + 1
	txn, err := client.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "=", version)).
		Then(clientv3.OpPut(key, strconv.FormatInt(rev, 10))).Commit()
	if err != nil {
		return err
	}
	if !txn.Succeeded {
		return errors.New("compact_rev_key changed meanwhile: the API server is compacting too")
	}
	if _, err := client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return err
	}
	fmt.Println(rev)
	return nil
}

// runLoad creates the objects of a JSON List (or {"items": [...]}) through the API, as a
// client would: what the server sets (uid, resourceVersion, creation time, managed fields) is
// left to it, each object's status is then written through its status subresource, and an
// object that was being deleted (a deletionTimestamp kept by finalizers) is deleted.
func runLoad(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: load DIR FILE")
	}
	config, err := configFrom(args[0])
	if err != nil {
		return err
	}
	body, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	var list struct {
		Items []map[string]interface{} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	namespaces := map[string]bool{}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, raw := range list.Items {
		obj := &unstructured.Unstructured{Object: raw}
		ns := obj.GetNamespace()
		if ns == "" || namespaces[ns] {
			continue
		}
		namespaces[ns] = true
		n := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": ns}}}
		if _, err := client.Resource(nsGVR).Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for _, raw := range list.Items {
		obj := &unstructured.Unstructured{Object: raw}
		if err := loadOne(ctx, client, mapper, obj); err != nil {
			return fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

func loadOne(ctx context.Context, client dynamic.Interface, mapper meta.RESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	var res dynamic.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		res = client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	status, hasStatus := obj.Object["status"]
	deleting := obj.GetDeletionTimestamp() != nil
	grace := obj.GetDeletionGracePeriodSeconds()
	for _, field := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	delete(obj.Object, "status")
	created, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// An APIService's status is the aggregator's own (its availability controller runs inside
	// kube-apiserver and writes it at once): what the server says is the test's subject.
	if hasStatus && status != nil && gvk.Kind != "Event" && gvk.Kind != "APIService" {
		created.Object["status"] = status
		if _, err := res.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("status: %w", err)
		}
	}
	if deleting {
		opts := metav1.DeleteOptions{GracePeriodSeconds: grace}
		if err := res.Delete(ctx, created.GetName(), opts); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
	}
	return nil
}
