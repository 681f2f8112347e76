package cmdline

import (
	"maps"
	"slices"
	"testing"

	"github.com/kreact/kreact/admission"
)

// TestAdmissionNeverIntercepted: the namespaces each command's webhooks
// leave out. kreact run leaves out its Pod's namespace, with a URL too;
// webhooks describes a kreact that may run elsewhere, and validate
// leaves out kreact's own namespace only when told where kreact runs.
func TestAdmissionNeverIntercepted(t *testing.T) {
	outside := func() (string, bool) { return "", false }
	inPod := func() (string, bool) { return "kreact-system", true }
	for _, tt := range []struct {
		name  string
		flags AdmissionFlags
		// The namespaces left out by Options, ServeOptions and
		// CheckOptions.
		options, serve, check []string
	}{
		{"outside, Service in default", AdmissionFlags{inPod: outside},
			[]string{"default", "kube-system"}, []string{"default", "kube-system"}, []string{"kube-system"}},
		{"outside, URL", AdmissionFlags{URL: "https://127.0.0.1:9443", inPod: outside},
			[]string{"kube-system"}, []string{"kube-system"}, []string{"kube-system"}},
		{"outside, Service in dev", AdmissionFlags{Namespace: "dev", inPod: outside},
			[]string{"dev", "kube-system"}, []string{"dev", "kube-system"}, []string{"dev", "kube-system"}},
		{"in a Pod, Service", AdmissionFlags{inPod: inPod},
			[]string{"kreact-system", "kube-system"}, []string{"kreact-system", "kube-system"}, []string{"kube-system"}},
		{"in a Pod, URL", AdmissionFlags{URL: "https://10.0.0.1:9443", inPod: inPod},
			[]string{"kube-system"}, []string{"kreact-system", "kube-system"}, []string{"kube-system"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.flags.Name, tt.flags.Service, tt.flags.Port = "kreact", "kreact-admission", 443
			for _, c := range []struct {
				method string
				want   []string
				opts   func(string) (admission.Options, error)
			}{
				{"Options", tt.options, tt.flags.Options},
				{"ServeOptions", tt.serve, tt.flags.ServeOptions},
				{"CheckOptions", tt.check, tt.flags.CheckOptions},
			} {
				opts, err := c.opts("cmd")
				if err != nil {
					t.Fatalf("%s: %v", c.method, err)
				}
				if got := slices.Sorted(maps.Keys(opts.NeverIntercepted())); !slices.Equal(got, c.want) {
					t.Errorf("%s leaves out %v, want %v", c.method, got, c.want)
				}
			}
		})
	}
}
