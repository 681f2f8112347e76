package testcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRD describes a simple custom resource definition for tests: one served
// and stored version, v1, with an open schema and a status subresource.
type CRD struct {
	Group, Kind, Plural string
	ShortNames          []string
	// ClusterScoped makes the resource cluster-scoped; the default is
	// namespaced.
	ClusterScoped bool
	// NoStatus leaves the status subresource out: status is then written
	// with the rest of the object.
	NoStatus bool
}

// GVR returns the custom resource's group, version (v1) and resource.
func (d CRD) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: d.Group, Version: "v1", Resource: d.Plural}
}

// Object returns the CRD as an unstructured apiextensions.k8s.io/v1 object.
func (d CRD) Object() *unstructured.Unstructured {
	scope := "Namespaced"
	if d.ClusterScoped {
		scope = "Cluster"
	}
	shortNames := make([]any, 0, len(d.ShortNames))
	for _, s := range d.ShortNames {
		shortNames = append(shortNames, s)
	}
	version := map[string]any{
		"name":         "v1",
		"served":       true,
		"storage":      true,
		"subresources": map[string]any{"status": map[string]any{}},
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type":                                 "object",
			"x-kubernetes-preserve-unknown-fields": true,
		}},
	}
	if d.NoStatus {
		delete(version, "subresources")
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": d.Plural + "." + d.Group},
		"spec": map[string]any{
			"group": d.Group,
			"scope": scope,
			"names": map[string]any{
				"kind":       d.Kind,
				"listKind":   d.Kind + "List",
				"plural":     d.Plural,
				"singular":   strings.ToLower(d.Kind),
				"shortNames": shortNames,
			},
			"versions": []any{version},
		},
	}}
}

// CreateCRD creates (or keeps) the CRD and waits until it is Established.
func CreateCRD(ctx context.Context, client dynamic.Interface, d CRD) error {
	crds := client.Resource(CRDGVR)
	_, err := crds.Create(ctx, d.Object(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s.%s: %w", d.Plural, d.Group, err)
	}
	name := d.Plural + "." + d.Group
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// DeleteCRD deletes the CRD and waits until it is gone.
func DeleteCRD(ctx context.Context, client dynamic.Interface, d CRD) error {
	crds := client.Resource(CRDGVR)
	name := d.Plural + "." + d.Group
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete CRD %s: %w", name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
