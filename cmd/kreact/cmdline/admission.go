package cmdline

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/leader"
)

// AdmissionFlags say how the API server reaches kreact's admission
// webhooks (package admission): `kreact run` applies the configurations
// they describe and `kreact webhooks` prints them.
type AdmissionFlags struct {
	Name      string
	Namespace string
	Service   string
	Port      int
	URL       string
	CAFile    string
	// InjectCAFrom is cert-manager's NAMESPACE/CERTIFICATE whose CA its
	// injector writes into the configurations.
	InjectCAFrom string

	// Only kreact run's (RegisterServe).
	Addr              string
	CertFile, KeyFile string
	CASecret          string
	Apply             bool
	// ValidateRules checks rule objects at apply (admission.ServerOptions.RuleObjects).
	ValidateRules bool

	// inPod is leader.InPod, unless a test sets it.
	inPod func() (string, bool)
}

// RegisterServe adds the flags of the webhook server of kreact run to
// fs, and those of Register.
func (a *AdmissionFlags) RegisterServe(fs *FlagSet) {
	a.Register(fs)
	fs.StringVarP(&a.Addr, "admission-bind-address", "", ":9443",
		"address of the HTTPS server of the rules' admission handlers (onValidate, onMutate); it listens only once a rule declares one (empty disables admission)")
	fs.StringVarP(&a.CertFile, "admission-cert-file", "", "",
		"PEM certificate of the admission server, read again when it changes (cert-manager, a mounted Secret); default: a certificate kreact generates, with a CA of its own, at start")
	fs.StringVarP(&a.KeyFile, "admission-key-file", "", "", "PEM key of --admission-cert-file")
	fs.StringVarP(&a.CASecret, "admission-ca-secret", "", "",
		"without --admission-cert-file: a Secret in --admission-namespace that keeps the CA of the generated certificates, created by the first replica, so that every replica's certificate is signed by the CA of the caBundle (empty: a CA of this replica's own)")
	fs.BoolVarP(&a.Apply, "admission-apply", "", true,
		"apply the webhook configurations of the rules with admission handlers, and delete them when no rule has any; false leaves them to you (kreact webhooks)")
	fs.BoolVarP(&a.ValidateRules, "admission-validate-rules", "", false,
		"check Rule and ClusterRule objects at apply as kreact validate does, so that the API server refuses a broken one: listen on --admission-bind-address from the start and apply the ValidatingWebhookConfiguration --admission-name-rule-objects (failure policy Ignore: while kreact is down, only the CRDs' schema checks)")
}

// Register adds the flags to fs.
func (a *AdmissionFlags) Register(fs *FlagSet) {
	fs.StringVarP(&a.Name, "admission-name", "", "kreact",
		"name of the ValidatingWebhookConfiguration and MutatingWebhookConfiguration of the rules' admission handlers")
	fs.StringVarP(&a.Namespace, "admission-namespace", "", "",
		"the namespace of --admission-service, kreact's own and never intercepted (nor kube-system) unless --admission-url is given (default: the pod's namespace, else \"default\")")
	fs.StringVarP(&a.Service, "admission-service", "", "kreact-admission",
		"the Service in --admission-namespace that the API server calls the admission webhooks through")
	fs.IntVar(&a.Port, "admission-service-port", 443, "the port of --admission-service")
	fs.StringVarP(&a.URL, "admission-url", "", "",
		"the base URL the API server calls instead of the Service, for kreact outside the cluster, e.g. https://127.0.0.1:9443")
	fs.StringVarP(&a.CAFile, "admission-ca-file", "", "",
		"PEM file of the CA that signed the webhook server's certificate: the configurations' caBundle")
	fs.StringVarP(&a.InjectCAFrom, "admission-inject-ca-from", "", "",
		"NAMESPACE/CERTIFICATE of cert-manager, whose CA injector then keeps the caBundle")
}

// ServeOptions is Options for the kreact that serves the webhooks,
// kreact run: in a Pod, the Pod's namespace is its own, and never
// intercepted either (admission.Options.PodNamespace).
func (a *AdmissionFlags) ServeOptions(cmd string) (admission.Options, error) {
	opts, err := a.Options(cmd)
	if ns, ok := a.pod(); ok {
		opts.PodNamespace = ns
	}
	return opts, err
}

func (a *AdmissionFlags) pod() (string, bool) {
	if a.inPod != nil {
		return a.inPod()
	}
	return leader.InPod()
}

// CheckOptions is Options for kreact validate, which checks the rules
// against the webhooks of a kreact that may run elsewhere: with neither
// --admission-namespace nor --admission-url, where it runs is unknown,
// and only kube-system is left out (the zero admission.Options).
func (a *AdmissionFlags) CheckOptions(cmd string) (admission.Options, error) {
	opts, err := a.Options(cmd)
	if a.Namespace == "" && a.URL == "" {
		return admission.Options{}, err
	}
	return opts, err
}

// Options checks the flags and returns the configurations' options, the
// CA bundle read from --admission-ca-file: those of a kreact in the
// namespace --admission-namespace, which the webhooks leave out when they
// call its Service there, and not with --admission-url.
func (a *AdmissionFlags) Options(cmd string) (admission.Options, error) {
	ns := a.Namespace
	if ns == "" {
		ns = "default"
		if pod, ok := a.pod(); ok {
			ns = pod
		}
	}
	for flag, v := range map[string]string{"--admission-namespace": ns, "--admission-service": a.Service} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: %s %q: %s", cmd, flag, v, strings.Join(errs, "; "))}
		}
	}
	if errs := validation.IsDNS1123Subdomain(a.Name); len(errs) > 0 {
		return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-name %q: %s", cmd, a.Name, strings.Join(errs, "; "))}
	}
	if a.Port < 1 || a.Port > 65535 {
		return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-service-port %d: want 1 to 65535", cmd, a.Port)}
	}
	if a.URL != "" {
		u, err := url.Parse(a.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-url %q: want an https URL with a host, and no query, fragment or credentials (the API server calls webhooks over TLS only)", cmd, a.URL)}
		}
	}
	if a.InjectCAFrom != "" {
		if ns, name, ok := strings.Cut(a.InjectCAFrom, "/"); !ok || ns == "" || name == "" {
			return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-inject-ca-from %q: want NAMESPACE/CERTIFICATE", cmd, a.InjectCAFrom)}
		}
	}
	opts := admission.Options{Name: a.Name, Namespace: ns, URL: a.URL, Service: a.Service, Port: int32(a.Port), InjectCAFrom: a.InjectCAFrom}
	if a.CAFile != "" {
		ca, err := os.ReadFile(a.CAFile)
		if err != nil {
			return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-ca-file: %v", cmd, err)}
		}
		if err := admission.CheckCABundle(ca); err != nil {
			return admission.Options{}, &UsageError{Msg: fmt.Sprintf("%s: --admission-ca-file %s: %v", cmd, a.CAFile, err)}
		}
		opts.CABundle = ca
	}
	return opts, nil
}
