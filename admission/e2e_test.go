//go:build e2e

package admission

import (
	"bytes"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// TestSharedCA: replicas that start together get one CA, which the first
// to create the Secret made, and the certificates each issues with it are
// trusted by its bundle.
func TestSharedCA(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const ns, name = "default", "kreact-admission-ca"
	var wg sync.WaitGroup
	cas := make([][]byte, 4)
	errs := make([]error, 4)
	for i := range cas {
		wg.Go(func() {
			var key []byte
			cas[i], key, errs[i] = SharedCA(t.Context(), dyn, ns, name, time.Now())
			if errs[i] == nil {
				_, errs[i] = IssueCertificates(cas[i], key, []string{"127.0.0.1"}, time.Now())
			}
		})
	}
	wg.Wait()
	for i := range cas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		if !bytes.Equal(cas[i], cas[0]) {
			t.Errorf("replica %d got another CA", i)
		}
	}
	if _, err := dyn.Resource(secretsGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
		t.Errorf("the CA secret: %v", err)
	}
}

// TestApplier: the configurations are applied as they are, applied again
// with fewer webhooks, and deleted, against the real API server's
// validation of webhook configurations.
func TestApplier(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	rs := loadRules(t, "testdata/rules.yaml")
	a := NewApplier(dyn)
	opts := Options{Name: "kreact-applier", Namespace: "kreact-system", URL: "https://127.0.0.1:1", CABundle: mustCA(t)}
	hooks := func() (v, m int) {
		vo, err := dyn.Resource(validatingGVR).Get(t.Context(), opts.Name, metav1.GetOptions{})
		if err == nil {
			l, _ := vo.Object["webhooks"].([]any)
			v = len(l)
		}
		mo, err := dyn.Resource(mutatingGVR).Get(t.Context(), opts.Name, metav1.GetOptions{})
		if err == nil {
			l, _ := mo.Object["webhooks"].([]any)
			m = len(l)
		}
		return v, m
	}
	v, m := Configurations(rs, opts)
	if err := a.Apply(t.Context(), v, m); err != nil {
		t.Fatal(err)
	}
	if gv, gm := hooks(); gv != 3 || gm != 3 {
		t.Errorf("applied %d validating and %d mutating webhooks, want 3 and 3", gv, gm)
	}
	// Only namespace-defaults, which only mutates: the validating
	// configuration goes.
	v, m = Configurations(rs[:1], opts)
	if err := a.Apply(t.Context(), v, m); err != nil {
		t.Fatal(err)
	}
	if gv, gm := hooks(); gv != 0 || gm != 1 {
		t.Errorf("applied %d validating and %d mutating webhooks, want 0 and 1", gv, gm)
	}
	if err := a.Delete(t.Context(), opts.Name); err != nil {
		t.Fatal(err)
	}
	if gv, gm := hooks(); gv != 0 || gm != 0 {
		t.Errorf("%d validating and %d mutating webhooks left after Delete", gv, gm)
	}
}

func mustCA(t *testing.T) []byte {
	t.Helper()
	ca, _, err := NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
