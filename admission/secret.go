package admission

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Keys of the CA Secret.
const (
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// SharedCA returns the CA kept in the Secret name in namespace, creating
// the Secret with a new CA when there is none, so that the replicas of
// kreact that generate their certificates sign them with one CA: the one
// the configurations' caBundle holds, whichever replica applied them
// last. The first replica to create the Secret wins; the others read it.
func SharedCA(ctx context.Context, client dynamic.Interface, namespace, name string, now time.Time) (certPEM, keyPEM []byte, err error) {
	secrets := client.Resource(secretsGVR).Namespace(namespace)
	for range 2 {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return caFromSecret(s)
		}
		if !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("admission CA secret %s/%s: %w", namespace, name, err)
		}
		certPEM, keyPEM, err := NewCA(now)
		if err != nil {
			return nil, nil, err
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"app.kubernetes.io/managed-by": "kreact"}},
			"type":       "Opaque",
			"stringData": map[string]any{caCertKey: string(certPEM), caKeyKey: string(keyPEM)},
		}}
		_, err = secrets.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		if err == nil {
			return certPEM, keyPEM, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("admission CA secret %s/%s: %w", namespace, name, err)
		}
		// Another replica created it meanwhile: read theirs.
	}
	return nil, nil, fmt.Errorf("admission CA secret %s/%s: created and deleted again meanwhile", namespace, name)
}

func caFromSecret(s *unstructured.Unstructured) (certPEM, keyPEM []byte, err error) {
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")
	decode := func(key string) ([]byte, error) {
		v, ok := data[key]
		if !ok {
			return nil, fmt.Errorf("admission CA secret %s/%s has no %s", s.GetNamespace(), s.GetName(), key)
		}
		return base64Decode(v)
	}
	if certPEM, err = decode(caCertKey); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = decode(caKeyKey); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

func base64Decode(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
