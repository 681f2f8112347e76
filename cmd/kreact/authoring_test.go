package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/testcluster"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of kreact validate, test and rbac in testdata")

// run runs kreact in-process and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut testcluster.LogBuffer
	code = runMain(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// transcript is what a golden file of a command holds.
func transcript(code int, stdout, stderr string) string {
	return fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, stderr)
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestValidateGolden runs `kreact validate` over rule files that each make
// one kind of mistake.
func TestValidateGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/validate/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files in testdata/validate: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			code, stdout, stderr := run(t, "validate", "-f", file)
			golden(t, strings.TrimSuffix(file, ".yaml")+".golden", transcript(code, stdout, stderr))
			wantOK := strings.HasPrefix(filepath.Base(file), "valid") || strings.HasPrefix(filepath.Base(file), "handlers")
			if (code == exitOK) != wantOK {
				t.Errorf("exit code %d", code)
			}
			if !wantOK && code != exitInvalid {
				t.Errorf("exit code %d, want %d", code, exitInvalid)
			}
		})
	}
}

func TestValidateExamples(t *testing.T) {
	// The CRD in examples/crds/ counts: no --crd needed.
	code, stdout, stderr := run(t, "validate", "-f", "../../examples")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "ok: 6 rules in 6 files") {
		t.Errorf("kreact validate of the examples: %s", transcript(code, stdout, stderr))
	}
	code, stdout, stderr = run(t, "validate", "-f", "../../examples/backup-configmaps.yaml", "-f", "../../examples/crds/backup.yaml")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "ok: 1 rule in 1 file") {
		t.Errorf("kreact validate of a rule and a CRD file: %s", transcript(code, stdout, stderr))
	}
	// Without the CRD, the Backup rule's "bk" does not resolve offline.
	code, _, stderr = run(t, "validate", "-f", "../../examples/backup-configmaps.yaml")
	if code != exitInvalid || !strings.Contains(stderr, `"bk": no such resource`) || !strings.Contains(stderr, "hint: custom resources resolve with --crd") {
		t.Errorf("kreact validate without --crd: exit %d\n%s", code, stderr)
	}
}

// durations are the only part of a test report that changes between runs.
var durations = regexp.MustCompile(`\((\d+(\.\d+)?(ns|µs|ms|s|m)|0s)\)`)

// TestExampleRuleTestsPass runs `kreact test examples/tests`, as CI should.
func TestExampleRuleTestsPass(t *testing.T) {
	for _, dir := range []string{"../../examples/tests", "../../examples"} {
		code, stdout, stderr := run(t, "test", dir)
		if code != exitOK || !strings.HasPrefix(lastLine(stdout), "ok") {
			t.Errorf("kreact test %s: %s", dir, transcript(code, stdout, stderr))
		}
		if n := strings.Count(stdout, "--- PASS: "); n < 20 {
			t.Errorf("kreact test %s: %d cases passed, want the examples' 20 or more", dir, n)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestTestCommandExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"failing case", []string{"test", "../../ruletest/testdata/broken.yaml"}, exitError, "FAIL\t4 of 4 cases in 1 file failed"},
		{"invalid file", []string{"test", "../../ruletest/testdata/invalid.yaml"}, exitInvalid, ""},
		{"missing file", []string{"test", "testdata/nope.yaml"}, exitInvalid, ""},
		{"no ./tests", []string{"test"}, exitUsage, ""},
		{"passing", []string{"test", "-v", "../../ruletest/testdata/pass.yaml"}, exitOK, "ok  \t7 cases in 1 file"},
		{"explain", []string{"test", "--explain", "../../ruletest/testdata/explain.yaml"}, exitError, "spec.watch[0].namespaces [teama]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.out) {
				t.Errorf("%s", transcript(code, stdout, stderr))
			}
		})
	}
}

// TestTestCommandGolden keeps the report of a failing test file as users
// see it.
func TestTestCommandGolden(t *testing.T) {
	code, stdout, stderr := run(t, "test", "../../ruletest/testdata/broken.yaml")
	golden(t, "testdata/test/broken.golden", transcript(code, durations.ReplaceAllString(stdout, "(X)"), stderr))
}

// TestRBACGolden keeps the RBAC generated for the examples, and for rules
// that watch only some namespaces.
func TestRBACGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"examples", []string{"rbac", "-f", "../../examples"}},
		{"three-problems", []string{"rbac", "-f", "testdata/rbac/three-problems.yaml"}},
		{"namespaced", []string{"rbac", "-f", "testdata/rbac/namespaced.yaml", "--name", "reactor", "-n", "ops", "--leader-elect"}},
		{"invalid", []string{"rbac", "-f", "testdata/validate/unknown-resource.yaml"}},
		{"bad-name", []string{"rbac", "-f", "testdata/rbac/namespaced.yaml", "--name", "Kreact"}},
		{"finalizer", []string{"rbac", "-f", "testdata/rbac/finalizer.yaml"}},
		{"shards", []string{"rbac", "-f", "testdata/rbac/namespaced.yaml", "--name", "reactor", "-n", "ops", "--shards"}},
		{"shards-and-leader", []string{"rbac", "-f", "testdata/rbac/namespaced.yaml", "--shards", "--leader-elect"}},
		{"admission", []string{"rbac", "-f", "testdata/webhooks/rules.yaml", "--admission-ca-secret", "kreact-admission-ca"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			golden(t, "testdata/rbac/"+tt.name+".golden", transcript(code, stdout, stderr))
		})
	}
}

// TestConditionsGolden: with the CRDs of --crd, validate requires patch
// beside condition on a resource without a status subresource, and rbac
// grants a condition get and patch on RESOURCE/status where there is one
// and on the resource itself where there is none.
func TestConditionsGolden(t *testing.T) {
	const crds = "testdata/conditions/crds.yaml"
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"validate-no-patch", []string{"validate", "-f", "testdata/conditions/no-patch.yaml", "--crd", crds}, exitInvalid},
		{"validate", []string{"validate", "-f", "testdata/conditions/rules.yaml", "--crd", crds}, exitOK},
		{"rbac", []string{"rbac", "-f", "testdata/conditions/rules.yaml", "--crd", crds}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			golden(t, "testdata/conditions/"+tt.name+".golden", transcript(code, stdout, stderr))
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
		})
	}
}

func TestWebhooksGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"service", []string{"webhooks", "-f", "testdata/webhooks/rules.yaml", "--admission-namespace", "kreact-system", "--admission-inject-ca-from", "kreact-system/kreact-admission"}},
		{"url", []string{"webhooks", "-f", "testdata/webhooks/rules.yaml", "--admission-namespace", "dev", "--admission-url", "https://127.0.0.1:9443"}},
		{"no-admission", []string{"webhooks", "-f", "../../examples/ttl-cleanup.yaml"}},
		{"bad-url", []string{"webhooks", "-f", "testdata/webhooks/rules.yaml", "--admission-url", "http://127.0.0.1:9443"}},
		{"bad-ca", []string{"webhooks", "-f", "testdata/webhooks/rules.yaml", "--admission-ca-file", "testdata/webhooks/bad-ca.pem"}},
		{"invalid", []string{"webhooks", "-f", "testdata/validate/unknown-resource.yaml"}},
		{"own-namespace", []string{"webhooks", "-f", "testdata/webhooks/rules.yaml", "--admission-namespace", "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			golden(t, "testdata/webhooks/"+tt.name+".golden", transcript(code, stdout, stderr))
		})
	}
}

// TestOwnNamespace: a rule that watches kreact's own namespace, which
// its webhooks never intercept, is an error for validate and webhooks
// alike, with the same flags: the namespace of --admission-namespace when
// the webhooks call the Service there, none with --admission-url. Without
// either flag, validate does not know where kreact runs, and leaves out
// kube-system only.
func TestOwnNamespace(t *testing.T) {
	const refused = `testdata/webhooks/rules.yaml:21:19: rule "owner-label": spec.watch[0].namespaces: dev is never intercepted, so that kreact's Pods can start while it is down: it is kreact's own namespace, its webhook Service's (a kreact outside the cluster, called at a URL instead, intercepts it)`
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"validate, where kreact runs unknown", nil, exitOK},
		{"validate, Service in dev", []string{"--admission-namespace", "dev"}, exitInvalid},
		{"validate, URL", []string{"--admission-namespace", "dev", "--admission-url", "https://127.0.0.1:9443"}, exitOK},
		{"webhooks, Service in dev", []string{"--admission-namespace", "dev"}, exitInvalid},
		{"webhooks, URL", []string{"--admission-url", "https://127.0.0.1:9443"}, exitOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd, _, _ := strings.Cut(tt.name, ",")
			code, stdout, stderr := run(t, append([]string{cmd, "-f", "testdata/webhooks/rules.yaml"}, tt.args...)...)
			if code != tt.code || strings.Contains(stderr, refused) != (tt.code == exitInvalid) {
				t.Errorf("%s\nwant exit %d, and the error %s only with it", transcript(code, stdout, stderr), tt.code, refused)
			}
		})
	}
}

// TestAuditModeWarnsOfFailurePolicyFail: audit mode makes a rule's
// failurePolicy Fail Ignore; validate and webhooks say so (issue 37).
func TestAuditModeWarnsOfFailurePolicyFail(t *testing.T) {
	const warning = `testdata/webhooks/rules.yaml:42:3: warning: rule "audited": spec.admission.failurePolicy Fail has no effect in audit mode`
	for _, cmd := range []string{"validate", "webhooks"} {
		code, stdout, stderr := run(t, cmd, "-f", "testdata/webhooks/rules.yaml")
		if code != exitOK || !strings.Contains(stderr, warning) {
			t.Errorf("kreact %s: %s\nwant exit 0 and the warning %s", cmd, transcript(code, stdout, stderr), warning)
		}
	}
}

// TestRunRefusesBadAdmissionCertificates: a certificate file that is
// missing, or a key that does not match it, stops kreact run before it
// connects to a cluster, naming the files (exit 3).
func TestRunRefusesBadAdmissionCertificates(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "r.yaml"), "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onValidate() {}'\n")
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeFile(t, cert, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	writeFile(t, key, "not a key\n")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing", []string{"--admission-cert-file", filepath.Join(dir, "nosuch.crt"), "--admission-key-file", key}, exitInvalid,
			"admission certificate: stat " + filepath.Join(dir, "nosuch.crt") + ": no such file or directory"},
		{"not a pair", []string{"--admission-cert-file", cert, "--admission-key-file", key}, exitInvalid,
			"admission certificate " + cert + " and key " + key + ": "},
		{"key without certificate", []string{"--admission-key-file", key}, exitUsage,
			"kreact: run: --admission-cert-file and --admission-key-file go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"run", "-f", dir, "--kubeconfig", filepath.Join(dir, "nosuch-kubeconfig")}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("%s\nwant exit %d and %q", transcript(code, stdout, stderr), tt.code, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeployRBACIsGenerated keeps deploy/rbac.yaml what `kreact rbac`
// prints for the rules deploy/ mounts.
func TestDeployRBACIsGenerated(t *testing.T) {
	var out, errOut testcluster.LogBuffer
	// deploy/namespace.yaml creates the namespace, with Pod Security labels.
	args := []string{"rbac", "-f", "../../deploy/rules", "--leader-elect", "--namespace", "kreact-system", "--create-namespace=false", "--admission-ca-secret", "kreact-admission-ca"}
	if code := runMain(t.Context(), args, &out, &errOut); code != exitOK {
		t.Fatalf("kreact rbac exited %d: %s", code, errOut.String())
	}
	want, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("deploy/rbac.yaml is not what `kreact %s` prints; regenerate it:\n%s", strings.Join(args, " "), out.String())
	}
}

// TestValidateRefusesAFIFO: a FIFO among the rule files or given as --crd
// is reported, not opened for reading (validate hung on it).
func TestValidateRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, args := range [][]string{
		{"validate", "-f", fifo},
		{"validate", "-f", dir},
		{"validate", "-f", "testdata/validate", "--crd", fifo},
	} {
		done := make(chan struct{})
		var code int
		var stderr string
		go func() { defer close(done); code, _, stderr = run(t, args...) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%v hangs on a FIFO", args)
		}
		if code != 3 || !strings.Contains(stderr, fifo+": not a regular file (a named pipe)") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 3 and %s: not a regular file (a named pipe)", args, code, stderr, fifo)
		}
	}
}

// TestRBACRefusesWhatValidateRefuses: kreact rbac reads rules as kreact
// validate does (issue 10), so a rule validate refuses, for its format,
// its script, its handlers or its resources, fails rbac with the same
// problems, worded the same; validate adds only its summary line.
func TestRBACRefusesWhatValidateRefuses(t *testing.T) {
	for _, file := range []string{
		"testdata/validate/never-runs.yaml", // handlers that do not fit spec.events
		"testdata/validate/every.yaml",      // spec.every without onTick
		"testdata/validate/unknown-resource.yaml",
		"testdata/validate/script-syntax.yaml",
		"testdata/validate/format.yaml",
		"testdata/rbac/three-problems.yaml",
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			vCode, _, vErr := run(t, "validate", "-f", file)
			rCode, rOut, rErr := run(t, "rbac", "-f", file)
			if vCode != exitInvalid || rCode != exitInvalid {
				t.Fatalf("validate exited %d, rbac %d, want %d for both:\nvalidate: %s\nrbac: %s", vCode, rCode, exitInvalid, vErr, rErr)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(vErr), "\n") {
				if !strings.Contains(line, ": warning: ") && !strings.HasPrefix(line, "hint: ") && line != lastLine(vErr) {
					want = append(want, line)
				}
			}
			if strings.TrimSpace(rErr) != strings.Join(want, "\n") || rOut != "" {
				t.Errorf("rbac printed\n%s\nstdout %q; want validate's errors\n%s", rErr, rOut, strings.Join(want, "\n"))
			}
		})
	}
}

// The isolated rules' process cannot share its parent's endpoint address.
func TestRunRefusesTheSameAddressForTheIsolatedProcess(t *testing.T) {
	for _, flag := range []string{"--metrics-bind-address", "--health-probe-bind-address"} {
		code, stdout, stderr := run(t, "run", "-f", "../../examples", flag, "127.0.0.1:8080", "--isolated-metrics-bind-address", "127.0.0.1:8080")
		if code != exitUsage || !strings.Contains(stderr, "--isolated-metrics-bind-address 127.0.0.1:8080 is already this process's address") {
			t.Errorf("%s: %s", flag, transcript(code, stdout, stderr))
		}
	}
}

// refusedRules are rules that kreact run refuses (scripting.CheckScript), and so
// must validate and test (issue 24): spec.every or spec.schedule without
// onTick, handlers that never run, a handler that is not a function, an
// invalid regular expression.
var refusedRules = []struct{ name, spec, script, want string }{
	{"every", "  every: 1m\n", "function onAdd(obj, ctx) {}",
		`spec.every is 1m0s but the script declares no onTick(ctx)`},
	{"schedule", "  schedule: \"0 3 * * *\"\n", "function onAdd(obj, ctx) {}",
		`spec.schedule is "0 3 * * *" but the script declares no onTick(ctx)`},
	{"misspelt", "  events: [update]\n", "function onAdd(obj, ctx) {}\nfunction onUpate(old, obj, ctx) {}",
		`the rule never runs: spec.events lists update but the script declares no onUpdate`},
	{"not-a-function", "", "var onAdd = 5;",
		`rule.yaml:9:9: rule "not-a-function": script: onAdd is declared but is not a function`},
	{"regexp", "", "function onAdd(obj, ctx) {\n  if (obj) /(/;\n}",
		`rule.yaml:10:16: rule "regexp": script: invalid regular expression /(/: Unterminated group`},
}

// refusedRule writes the rule of a refusedRules case in dir, as rule.yaml.
func refusedRule(t *testing.T, dir, name, spec, script string) string {
	t.Helper()
	path := filepath.Join(dir, "rule.yaml")
	writeFile(t, path, fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
%s  script: |
%s`, name, spec, indent(script, "    ")))
	return path
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

// TestTestReportsWhatValidateReports: kreact test reports the errors of
// the rules it tests as validate does, all at once, the scripts' of rules
// with other problems too.
func TestTestReportsWhatValidateReports(t *testing.T) {
	for _, file := range []string{
		"testdata/validate/schedule-all-at-once.yaml",
		"testdata/validate/format.yaml",
		"testdata/validate/script-syntax.yaml",
		"testdata/validate/never-runs.yaml",
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			rule, test := filepath.Join(dir, "rule.yaml"), filepath.Join(dir, "rule_test.yaml")
			writeFile(t, rule, string(data))
			writeFile(t, test, ruleTest)
			vCode, _, vErr := run(t, "validate", "-f", rule)
			tCode, tOut, tErr := run(t, "test", test)
			if vCode != exitInvalid || tCode != exitInvalid {
				t.Fatalf("validate exited %d, test %d, want %d for both:\nvalidate: %s\ntest: %s%s", vCode, tCode, exitInvalid, vErr, tOut, tErr)
			}
			if want := validateErrors(vErr); strings.TrimSpace(tErr) != want {
				t.Errorf("test printed\n%s\nwant validate's errors\n%s", tErr, want)
			}
		})
	}
}

// manyKinds is a rule file with errors of every kind: of YAML, of the
// schema, of a script that does not compile, of handlers, of a resource,
// of kreact.once and of admission.
const manyKinds = "testdata/validate/many-kinds.yaml"

// TestEveryCommandReportsTheSameErrors: validate, test and webhooks report
// the one list of errors of a file (issue 37: test left out the admission
// errors); kreact run and record, which need a cluster, are checked
// against the same list in TestRunAndRecordReportTheSameErrors.
func TestEveryCommandReportsTheSameErrors(t *testing.T) {
	dir := t.TempDir()
	rule := filepath.Join(dir, "rule.yaml")
	data, err := os.ReadFile(manyKinds)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, rule, string(data))
	writeFile(t, filepath.Join(dir, "rule_test.yaml"), ruleTest)
	code, stdout, stderr := run(t, "validate", "-f", rule)
	want := validateErrors(stderr)
	if code != exitInvalid || strings.Count(want, "\n")+1 != 9 {
		t.Fatalf("validate: %s\nwant exit %d and 9 errors", transcript(code, stdout, stderr), exitInvalid)
	}
	for _, args := range [][]string{
		{"test", filepath.Join(dir, "rule_test.yaml")},
		{"webhooks", "-f", rule},
	} {
		code, stdout, stderr := run(t, args...)
		if got := strings.TrimSpace(stderr); code != exitInvalid || got != want {
			t.Errorf("kreact %s: %s\nwant exit %d and validate's errors:\n%s", args[0], transcript(code, stdout, stderr), exitInvalid, want)
		}
	}
}

// ruleTest is a test file of the rule in rule.yaml beside it.
const ruleTest = `apiVersion: kreact.dev/v1alpha1
kind: RuleTest
spec:
  rules: [rule.yaml]
  cases:
    - name: an add
      events:
        - add: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}
`

// validateErrors returns the errors that validate printed to stderr,
// without its warnings, hints and summary.
func validateErrors(stderr string) string {
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.Contains(line, ": warning: ") && !strings.HasPrefix(line, "hint: ") && line != lastLine(stderr) {
			errs = append(errs, line)
		}
	}
	return strings.Join(errs, "\n")
}

// TestValidateAndTestRefuseTheSameRules: a rule that kreact run refuses
// makes `kreact validate` and `kreact test` exit 3 with the same errors
// (`kreact test` passed such rules, one of them with every case).
func TestValidateAndTestRefuseTheSameRules(t *testing.T) {
	for _, c := range refusedRules {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rule := refusedRule(t, dir, c.name, c.spec, c.script)
			test := filepath.Join(dir, "rule_test.yaml")
			writeFile(t, test, ruleTest)
			vCode, _, vErr := run(t, "validate", "-f", rule)
			tCode, tOut, tErr := run(t, "test", test)
			if vCode != exitInvalid || tCode != exitInvalid {
				t.Fatalf("validate exited %d, test %d, want %d for both:\nvalidate: %s\ntest: %s%s", vCode, tCode, exitInvalid, vErr, tOut, tErr)
			}
			want := validateErrors(vErr)
			if strings.Contains(want, "\n") || !strings.HasSuffix(want, c.want) {
				t.Errorf("validate printed\n%s\nwant one error ending %s", vErr, c.want)
			}
			if strings.TrimSpace(tErr) != want {
				t.Errorf("test printed\n%s\nwant validate's errors\n%s", tErr, want)
			}
		})
	}
}

// TestValidateAndTestPlaceReadsAlike: a read of a path that
// spec.watch[].fields does not keep is warned about by kreact validate and
// fails kreact test, and both place it at the same file:line:col (the
// start of the chain) and name it with the script's own parameter names,
// not the documentation's (obj, oldObj, newObj).
func TestValidateAndTestPlaceReadsAlike(t *testing.T) {
	dir := t.TempDir()
	writeFile := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("rule.yaml", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: reader
spec:
  watch:
    - resource: configmaps
      fields: [metadata.labels]
  events: [add, update]
  script: |
    function onAdd(cm) { if (cm.data.x) { kreact.log("x", {n: cm.metadata.name}); } }
    function onUpdate(before, cm) {
      const moved = before.metadata.labels.app !== cm.metadata.labels.app;
      kreact.log("update", {moved, size: String(cm.data?.size), old: String(before.data)});
    }
`)
	writeFile("tests/reads.yaml", `apiVersion: kreact.dev/v1alpha1
kind: RuleTest
metadata:
  name: reads
spec:
  rules: [../rule.yaml]
  cases:
    - name: reads
      events:
        - add: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default, labels: {app: web}}, data: {x: "1", size: "2"}}
        - update: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default, labels: {app: db}}, data: {x: "1", size: "3"}}
      expect:
        ignoreOtherActions: true
`)
	// "rule.yaml:11:30 onAdd cm.data", whatever the directory.
	reads := func(out string, re *regexp.Regexp) []string {
		var got []string
		for _, m := range re.FindAllStringSubmatch(out, -1) {
			got = append(got, filepath.Base(m[1])+" "+m[2]+" "+m[3])
		}
		slices.Sort(got)
		return got
	}
	code, vout, verr := run(t, "validate", "-f", filepath.Join(dir, "rule.yaml"))
	validated := reads(verr, regexp.MustCompile(`(\S+:\d+:\d+): warning: rule "reader": (on\w+) reads (\S+), which`))
	code2, tout, terr := run(t, "test", filepath.Join(dir, "tests"))
	tested := reads(tout, regexp.MustCompile(`(\S+:\d+:\d+): (on\w+) read (\S+), which`))
	want := []string{"rule.yaml:11:30 onAdd cm.data", "rule.yaml:14:49 onUpdate cm.data", "rule.yaml:14:77 onUpdate before.data"}
	if !slices.Equal(validated, want) {
		t.Errorf("kreact validate places the reads at %q, want %q\n%s", validated, want, transcript(code, vout, verr))
	}
	if !slices.Equal(tested, want) {
		t.Errorf("kreact test places the reads at %q, want %q (as kreact validate)\n%s", tested, want, transcript(code2, tout, terr))
	}
}
