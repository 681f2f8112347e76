//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/internal/buildinfo"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestMakeBuildStampsTheVersion runs `make build` (into a folder of the
// test's, not bin/) and checks that the binary says the version git
// describes and the commit checked out, in kreact version and in the
// kreact_build_info series of a kreact run's /metrics.
func TestMakeBuildStampsTheVersion(t *testing.T) {
	root := gitOut(t, "rev-parse", "--show-toplevel")
	bin := t.TempDir()
	if out, err := exec.Command("make", "-C", root, "--no-print-directory", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	want := buildinfo.Build{
		Version:   gitOut(t, "describe", "--tags", "--always", "--dirty"),
		Commit:    gitOut(t, "rev-parse", "HEAD"),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	kreact := filepath.Join(bin, "kreact")
	out, err := exec.Command(kreact, "version", "-o", "json").Output()
	var got buildinfo.Build
	if err == nil {
		err = json.Unmarshal(out, &got)
	}
	if err != nil || got != want {
		t.Fatalf("kreact version -o json: %v, %s; want %+v", err, out, want)
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rule.yaml"), annotatingRule("stamped", "version-e2e", ""))
	addr := testcluster.FreeAddr(t)
	k := startBinary(t, kreact, "run", "-f", dir, "--metrics-bind-address", addr)
	series := `kreact_build_info{commit="` + want.Commit + `",goversion="` + want.GoVersion + `",version="` + want.Version + `"} 1`
	testcluster.Eventually(t, "kreact run to load its rule", func() bool { return k.stderr.Count(`msg="rules loaded"`) == 1 })
	if _, body := testcluster.HTTPGet(t, "http://"+addr+"/metrics"); !strings.Contains(body, "\n"+series+"\n") {
		t.Errorf("/metrics lacks %s:\n%s", series, body)
	}
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestMakeReleaseMakesCheckedArtifacts: make release (for one platform
// here; the four are the same loop) puts the stamped binary and the
// chart's package, versioned like it, in DIST, and SHA256SUMS checks
// both.
func TestMakeReleaseMakesCheckedArtifacts(t *testing.T) {
	root := gitOut(t, "rev-parse", "--show-toplevel")
	dist := t.TempDir()
	if out, err := exec.Command("make", "-C", root, "--no-print-directory", "release", "DIST="+dist, "RELEASE_PLATFORMS=linux/amd64").CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	version := gitOut(t, "describe", "--tags", "--always", "--dirty")
	chart := "kreact-0.0.0-dev-" + version + ".tgz"
	if v, ok := strings.CutPrefix(version, "v"); ok {
		chart = "kreact-" + v + ".tgz"
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kreact-" + version + "-linux-amd64", chart} {
		if !strings.Contains(string(sums), "  "+name+"\n") {
			t.Errorf("SHA256SUMS does not list %s:\n%s", name, sums)
		}
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = dist
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(root, "bin", "helm"), "show", "chart", filepath.Join(dist, chart)).Output()
	// Read as YAML: helm quotes an appVersion that would read as another
	// type, as a commit like 3849e67 does (a float).
	var meta struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err == nil {
		err = yaml.Unmarshal(out, &meta)
	}
	if err != nil || meta.AppVersion != version {
		t.Errorf("helm show chart %s: %v\n%s\nwant appVersion %s", chart, err, out, version)
	}
}
