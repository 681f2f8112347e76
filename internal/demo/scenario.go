package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// Namespace is where the scenario's namespaced objects live.
const Namespace = "team-a"

var (
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	eventsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	netpolGVR      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	backupsGVR     = schema.GroupVersionResource{Group: "demo.kreact.dev", Version: "v1alpha1", Resource: "backups"}
	secretsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// Env is what the steps work with.
type Env struct {
	Client  dynamic.Interface
	Webhook *Receiver
	// Say narrates a step; nil is silent.
	Say func(format string, args ...any)
	// Timeout bounds each wait for a reaction. Zero means 90s.
	Timeout time.Duration
}

func (e *Env) say(format string, args ...any) {
	if e.Say != nil {
		e.Say(format, args...)
	}
}

// Step is one part of the scenario: it provokes one example rule and
// checks its reaction. It returns what it saw, for the narration.
type Step struct {
	Rule        string
	Description string
	Run         func(ctx context.Context, e *Env) (string, error)
}

// Steps returns the scenario, one step per example rule, in the order the
// demo shows them (each step may rely on the ones before it).
func Steps() []Step {
	return []Step{
		{"namespace-defaults", "a new namespace gets default labels and a default-deny NetworkPolicy", namespaceDefaults},
		{"restart-on-config-change", "changing a ConfigMap rolls the Deployment that mounts it", restartOnConfigChange},
		{"ttl-cleanup", "a ConfigMap with kreact.dev/ttl is deleted when it expires", ttlCleanup},
		{"backup-configmaps", "a Backup custom resource snapshots ConfigMaps and reports its status", backupConfigMaps},
		{"notify-failures", "a crash-looping Pod and a NotReady Node post to a webhook", notifyFailures},
		{"secret-sync", "a labelled Secret is copied to another namespace; deleting it deletes the copy first (finalizer)", secretSync},
	}
}

func namespaceDefaults(ctx context.Context, e *Env) (string, error) {
	e.say("create namespace %s", Namespace)
	if err := e.create(ctx, namespacesGVR, "", obj("v1", "Namespace", "", Namespace, nil)); err != nil {
		return "", err
	}
	var labels map[string]string
	err := e.waitFor(ctx, "labels on namespace "+Namespace, func() (bool, error) {
		ns, err := e.Client.Resource(namespacesGVR).Get(ctx, Namespace, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		labels = ns.GetLabels()
		return labels["kreact.dev/managed"] == "true" && labels["team"] == "unassigned", nil
	})
	if err != nil {
		return "", err
	}
	err = e.waitFor(ctx, "NetworkPolicy default-deny-ingress", func() (bool, error) {
		_, err := e.Client.Resource(netpolGVR).Namespace(Namespace).Get(ctx, "default-deny-ingress", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("namespace %s labelled team=%s kreact.dev/managed=%s; NetworkPolicy %s/default-deny-ingress applied",
		Namespace, labels["team"], labels["kreact.dev/managed"], Namespace), nil
}

func restartOnConfigChange(ctx context.Context, e *Env) (string, error) {
	e.say("create ConfigMap app-config and Deployments web (mounts it) and other (does not)")
	cm := obj("v1", "ConfigMap", Namespace, "app-config", map[string]any{"data": map[string]any{"greeting": "hello"}})
	if err := e.create(ctx, configMapsGVR, Namespace, cm); err != nil {
		return "", err
	}
	for _, d := range []*unstructured.Unstructured{deployment("web", "app-config"), deployment("other", "")} {
		if err := e.create(ctx, deploymentsGVR, Namespace, d); err != nil {
			return "", err
		}
	}
	// Let the rule's cache see the Deployments before the change arrives.
	time.Sleep(time.Second)
	e.say("change app-config: greeting hello → hi")
	patch := []byte(`{"data":{"greeting":"hi"}}`)
	if _, err := e.Client.Resource(configMapsGVR).Namespace(Namespace).Patch(ctx, "app-config", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return "", err
	}
	const key = "kreact.dev/configmap-app-config"
	var hash string
	err := e.waitFor(ctx, "the restart annotation on deployment web", func() (bool, error) {
		d, err := e.Client.Resource(deploymentsGVR).Namespace(Namespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		hash, _, _ = unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", key)
		return hash != "", nil
	})
	if err != nil {
		return "", err
	}
	other, err := e.Client.Resource(deploymentsGVR).Namespace(Namespace).Get(ctx, "other", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if v, found, _ := unstructured.NestedString(other.Object, "spec", "template", "metadata", "annotations", key); found {
		return "", fmt.Errorf("deployment other does not use app-config but got %s=%s", key, v)
	}
	event, err := e.waitForEvent(ctx, "web", "ConfigChanged")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("deployment web: pod template annotated %s=%s (rolling update); deployment other untouched; event: %s", key, hash, event), nil
}

func ttlCleanup(ctx context.Context, e *Env) (string, error) {
	e.say("create ConfigMap scratch with kreact.dev/ttl=3s, and keeper without a TTL")
	scratch := obj("v1", "ConfigMap", Namespace, "scratch", nil)
	scratch.SetAnnotations(map[string]string{"kreact.dev/ttl": "3s"})
	if err := e.create(ctx, configMapsGVR, Namespace, scratch); err != nil {
		return "", err
	}
	if err := e.create(ctx, configMapsGVR, Namespace, obj("v1", "ConfigMap", Namespace, "keeper", nil)); err != nil {
		return "", err
	}
	start := time.Now()
	err := e.waitFor(ctx, "ConfigMap scratch to be deleted", func() (bool, error) {
		_, err := e.Client.Resource(configMapsGVR).Namespace(Namespace).Get(ctx, "scratch", metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
	if err != nil {
		return "", err
	}
	if _, err := e.Client.Resource(configMapsGVR).Namespace(Namespace).Get(ctx, "keeper", metav1.GetOptions{}); err != nil {
		return "", fmt.Errorf("ConfigMap keeper without a TTL: %w", err)
	}
	return fmt.Sprintf("ConfigMap scratch deleted %s after creation (TTL 3s, its own timer); keeper kept", time.Since(start).Round(time.Second)), nil
}

func backupConfigMaps(ctx context.Context, e *Env) (string, error) {
	e.say("create ConfigMaps db-settings and cache-settings labelled backup=yes, then Backup nightly (selector backup=yes)")
	for _, name := range []string{"db-settings", "cache-settings"} {
		cm := obj("v1", "ConfigMap", Namespace, name, map[string]any{"data": map[string]any{"owner": "team-a"}})
		cm.SetLabels(map[string]string{"backup": "yes"})
		if err := e.create(ctx, configMapsGVR, Namespace, cm); err != nil {
			return "", err
		}
	}
	time.Sleep(time.Second) // let the rule's cache see the ConfigMaps
	bk := obj("demo.kreact.dev/v1alpha1", "Backup", Namespace, "nightly", map[string]any{"spec": map[string]any{"selector": "backup=yes"}})
	if err := e.create(ctx, backupsGVR, Namespace, bk); err != nil {
		return "", err
	}
	var status map[string]any
	// The rule's two actions, the copy's apply and the status patch, are
	// on different objects, which kreact writes in parallel with no order
	// between them: the status may say Completed a moment before the copy
	// exists. Wait for both.
	err := e.waitFor(ctx, "Backup nightly to complete and its ConfigMap to exist", func() (bool, error) {
		b, err := e.Client.Resource(backupsGVR).Namespace(Namespace).Get(ctx, "nightly", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		status, _, _ = unstructured.NestedMap(b.Object, "status")
		if status["phase"] != "Completed" {
			return false, nil
		}
		_, err = e.Client.Resource(configMapsGVR).Namespace(Namespace).Get(ctx, "backup-nightly", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return "", err
	}
	if items, _ := status["items"].(int64); items != 2 {
		return "", fmt.Errorf("backup status items = %v, want 2", status["items"])
	}
	copyCM, err := e.Client.Resource(configMapsGVR).Namespace(Namespace).Get(ctx, "backup-nightly", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("backup ConfigMap: %w", err)
	}
	data, _, _ := unstructured.NestedStringMap(copyCM.Object, "data")
	if len(data) != 2 || data["db-settings.json"] == "" {
		return "", fmt.Errorf("backup ConfigMap data keys = %v, want db-settings.json and cache-settings.json", keys(data))
	}
	if owners := copyCM.GetOwnerReferences(); len(owners) != 1 || owners[0].Kind != "Backup" {
		return "", fmt.Errorf("backup ConfigMap owners = %v, want the Backup", owners)
	}
	return fmt.Sprintf("Backup nightly: status phase=%v items=%v configMap=%v; ConfigMap backup-nightly holds %s",
		status["phase"], status["items"], status["configMap"], strings.Join(keys(data), ", ")), nil
}

func notifyFailures(ctx context.Context, e *Env) (string, error) {
	e.say("create Pod crashy and make its container crash-loop (status patch: there is no kubelet here)")
	pod := obj("v1", "Pod", Namespace, "crashy", map[string]any{"spec": map[string]any{
		"automountServiceAccountToken": false,
		"containers":                   []any{map[string]any{"name": "app", "image": "busybox:1.36", "command": []any{"false"}}},
	}})
	if err := e.create(ctx, podsGVR, Namespace, pod); err != nil {
		return "", err
	}
	crash := []byte(`{"status":{"containerStatuses":[{"name":"app","image":"busybox:1.36","imageID":"","ready":false,"restartCount":5,
		"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s restarting failed container"}}}]}}`)
	if _, err := e.Client.Resource(podsGVR).Namespace(Namespace).Patch(ctx, "crashy", types.MergePatchType, crash, metav1.PatchOptions{}, "status"); err != nil {
		return "", fmt.Errorf("patch pod status: %w", err)
	}
	podMsg, err := e.waitForMessage(ctx, "crashy")
	if err != nil {
		return "", err
	}

	e.say("create Node worker-1, Ready, then report it NotReady")
	if err := e.create(ctx, nodesGVR, "", obj("v1", "Node", "", "worker-1", nil)); err != nil {
		return "", err
	}
	for _, status := range []string{"True", "False"} {
		now := time.Now().UTC().Format(time.RFC3339)
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q,"reason":"Demo","message":"set by the demo","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`, status, now, now)
		if _, err := e.Client.Resource(nodesGVR).Patch(ctx, "worker-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			return "", fmt.Errorf("patch node status: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	nodeMsg, err := e.waitForMessage(ctx, "worker-1")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("webhook received %q and %q", podMsg, nodeMsg), nil
}

func secretSync(ctx context.Context, e *Env) (string, error) {
	const target, name, fin = "team-b", "db-credentials", "kreact.dev/secret-sync"
	e.say("create namespace %s, then Secret %s/%s labelled kreact.dev/sync=true, annotated kreact.dev/sync-to=%s", target, Namespace, name, target)
	if err := e.create(ctx, namespacesGVR, "", obj("v1", "Namespace", "", target, nil)); err != nil {
		return "", err
	}
	src := obj("v1", "Secret", Namespace, name, map[string]any{"stringData": map[string]any{"password": "hunter2"}})
	src.SetLabels(map[string]string{"kreact.dev/sync": "true"})
	src.SetAnnotations(map[string]string{"kreact.dev/sync-to": target})
	if err := e.create(ctx, secretsGVR, Namespace, src); err != nil {
		return "", err
	}
	err := e.waitFor(ctx, "the copy in "+target+" and the finalizer on the source", func() (bool, error) {
		if _, err := e.Client.Resource(secretsGVR).Namespace(target).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, ignoreNotFound(err)
		}
		s, err := e.Client.Resource(secretsGVR).Namespace(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return slices.Contains(s.GetFinalizers(), fin), nil
	})
	if err != nil {
		return "", err
	}
	e.say("delete Secret %s/%s", Namespace, name)
	if err := e.Client.Resource(secretsGVR).Namespace(Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return "", err
	}
	for _, ns := range []string{target, Namespace} {
		err := e.waitFor(ctx, "Secret "+ns+"/"+name+" to be deleted", func() (bool, error) {
			_, err := e.Client.Resource(secretsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), ignoreNotFound(err)
		})
		if err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Secret %s/%s copied to %s with the finalizer %s; on delete, onDelete deleted the copy, then the finalizer went and the source with it",
		Namespace, name, target, fin), nil
}

func deployment(name, configMap string) *unstructured.Unstructured {
	podSpec := map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": "busybox:1.36", "command": []any{"sleep", "infinity"}}},
	}
	if configMap != "" {
		podSpec["volumes"] = []any{map[string]any{"name": "config", "configMap": map[string]any{"name": configMap}}}
	}
	labels := map[string]any{"app": name}
	return obj("apps/v1", "Deployment", Namespace, name, map[string]any{"spec": map[string]any{
		"replicas": int64(1),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec},
	}})
}

// obj builds an object; fields are merged at the top level.
func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// create creates u, retrying while the API server is not ready for it
// (a CRD still being served, a namespace's service account not there yet).
func (e *Env) create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, u *unstructured.Unstructured) error {
	client := e.Client.Resource(gvr).Namespace(namespace)
	var last error
	err := e.waitFor(ctx, fmt.Sprintf("create %s %s", strings.ToLower(u.GetKind()), u.GetName()), func() (bool, error) {
		_, last = client.Create(ctx, u, metav1.CreateOptions{})
		return last == nil || apierrors.IsAlreadyExists(last), nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w: %v", err, last)
	}
	return err
}

func (e *Env) waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, last)
		}
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// waitForEvent returns the message of an Event with reason about the
// named object in Namespace.
func (e *Env) waitForEvent(ctx context.Context, name, reason string) (string, error) {
	var msg string
	err := e.waitFor(ctx, "event "+reason+" about "+name, func() (bool, error) {
		list, err := e.Client.Resource(eventsGVR).Namespace(Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		msg, _, _ = unstructured.NestedString(list.Items[0].Object, "message")
		return true, nil
	})
	return msg, err
}

func (e *Env) waitForMessage(ctx context.Context, contains string) (string, error) {
	var msg string
	err := e.waitFor(ctx, "a webhook notification about "+contains, func() (bool, error) {
		for _, m := range e.Webhook.Messages() {
			if strings.Contains(m, contains) {
				msg = m
				return true, nil
			}
		}
		return false, nil
	})
	return msg, err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
