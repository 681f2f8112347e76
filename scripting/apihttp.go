package scripting

import (
	"net/url"
	"strings"

	"github.com/dop251/goja"

	"github.com/kreact/kreact/actions"
)

// The kreact API for calling out: kreact.http, an action like the
// others (the Host permits its URL by spec.permissions), sent after the
// call returns.

// installHTTP installs kreact.http, refused in admission handlers
// (queuing).
func (e *env) installHTTP(kreact calls) {
	kreact.add("http", e.queuing("http", e.http))
}

// kreact.http({url, method, headers, body}).
func (e *env) http(call goja.FunctionCall) goja.Value {
	e.enter("http")
	o, ok := call.Argument(0).(*goja.Object)
	if !ok {
		e.throwType("http: want http({url, method, headers, body})")
	}
	rawURL := e.str("http", o, "url", "")
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.throwType("http: url must be an absolute http or https URL, not %q", rawURL)
	}
	method := strings.ToUpper(e.str("http", o, "method", ""))
	if method == "" {
		method = "POST"
	}
	if !isToken(method) {
		e.throwType("http: invalid method %q", method)
	}
	req := &actions.HTTPRequest{Method: method, URL: u.String()}
	if h := o.Get("headers"); h != nil && !goja.IsUndefined(h) && !goja.IsNull(h) {
		hm, ok := e.json("http", h, "headers.").(map[string]any)
		if !ok {
			e.throwType("http: headers must be an object of strings")
		}
		req.Headers = make(map[string]string, len(hm))
		for k, v := range hm {
			s, ok := v.(string)
			if !ok || !isToken(k) || strings.ContainsAny(s, "\r\n") {
				e.throwType("http: header %q must be a valid name with a single-line string value", k)
			}
			req.Headers[k] = s
		}
	}
	switch body := o.Get("body"); {
	case body == nil || goja.IsUndefined(body):
	case goja.IsString(body):
		req.Body = []byte(body.String())
	default:
		data, err := canonicalJSON(e.json("http", body, "body."))
		if err != nil {
			e.throwType("http: body: %v", err)
		}
		req.Body = data
		if !hasHeader(req.Headers, "Content-Type") {
			if req.Headers == nil {
				req.Headers = map[string]string{}
			}
			req.Headers["Content-Type"] = "application/json"
		}
	}
	if len(req.Body) > maxValueSize {
		e.throwType("http: body is larger than %d bytes", maxValueSize)
	}
	a := actions.Action{
		Rule:    e.cfg.opts.Rule,
		Verb:    actions.HTTP,
		Request: req,
		DryRun:  e.cfg.opts.DryRun,
		Origin:  e.origin(),
	}
	return e.enqueue("http", func() string { return method + " " + u.Redacted() }, a)
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// isToken reports whether s is an HTTP token (method, header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
