//go:build e2e

// Package examples_test runs every example rule against a real control
// plane, through the same scenario `make demo` shows.
package examples_test

import (
	"context"
	"log/slog"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/demo"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

func TestExampleRules(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logFile, err := os.CreateTemp(t.TempDir(), "kreact-*.log")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))
	defer func() {
		if t.Failed() {
			data, _ := os.ReadFile(logFile.Name())
			t.Logf("kreact logs:\n%s", data)
		}
	}()

	rs, err := rules.Load(".")
	if err != nil {
		t.Fatalf("example rules do not load: %v", err)
	}
	if len(rs) < 6 {
		t.Fatalf("loaded %d example rules, want at least 6", len(rs))
	}
	stack, err := clientstack.Start(ctx, cluster.Config(), clientstack.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{Logger: logger})
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; _ = stack.Wait() }()

	// The rules start before the Backup CRD exists: that rule waits for it.
	if err := eng.Load(ctx, rs); err != nil {
		t.Fatalf("load example rules: %v", err)
	}
	crd := readObject(t, "crds/backup.yaml")
	if _, err := stack.Client.Resource(testcluster.CRDGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the Backup CRD: %v", err)
	}

	webhook, err := demo.StartReceiver(ctx, demo.WebhookAddr, nil)
	if err != nil {
		t.Fatalf("webhook receiver: %v", err)
	}
	env := &demo.Env{Client: stack.Client, Webhook: webhook, Say: func(format string, args ...any) { t.Logf(format, args...) }}
	for _, step := range demo.Steps() {
		t.Run(step.Rule, func(t *testing.T) {
			env.Say = func(format string, args ...any) { t.Logf(format, args...) }
			got, err := step.Run(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(got)
		})
	}
	for rule, st := range eng.ActionStats() {
		if st.Failed > 0 || st.GaveUp > 0 {
			t.Errorf("rule %s: %d actions failed and %d gave up", rule, st.Failed, st.GaveUp)
		}
	}
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: m}
}
