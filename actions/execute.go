package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/internal/unreachable"
)

// FieldManager is the field manager of every write kreact makes.
const FieldManager = "kreact"

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// execute performs one action against the API server (or the HTTP target).
func (q *Queue) execute(ctx context.Context, a Action) error {
	var dryRun []string
	if a.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	var err error
	switch a.Verb {
	case Create, Apply, Patch, Delete:
		err = q.write(ctx, a, dryRun)
	case SetCondition:
		err = q.setCondition(ctx, a, dryRun)
	case Event:
		err = q.write(ctx, Action{Verb: Create, Resource: eventsGVR, Namespace: eventNamespace(a), Object: eventObject(a, time.Now()).Object}, dryRun)
	case HTTP:
		err = q.sendHTTP(ctx, a)
	default:
		err = &permanentError{fmt.Errorf("unknown action verb %q", a.Verb)}
	}
	if err != nil && q.opts.ActingAs != "" && a.Verb != HTTP {
		return fmt.Errorf("%s %s as %s: %w", a.Verb, describeTarget(a), q.opts.ActingAs, err)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Verb, describeTarget(a), err)
	}
	switch {
	case a.DryRun:
		q.log.Info("dry-run: would "+string(a.Verb), actionAttrs(a)...)
	case q.log.Enabled(ctx, slog.LevelInfo):
		// Checked first: building the attributes of a line per action
		// that nobody reads costs a busy rule more than the line's worth.
		q.log.Info(string(a.Verb)+" done", actionAttrs(a)...)
	}
	return nil
}

// write performs a create, apply, patch or delete of a's target. The
// requests are those of client-go's dynamic client, but the object the
// server answers with is not decoded: kreact never reads it, and decoding
// it cost a controller under load about a tenth of its CPU.
func (q *Queue) write(ctx context.Context, a Action, dryRun []string) error {
	var req *rest.Request
	switch a.Verb {
	case Create:
		body, err := json.Marshal(a.Object)
		if err != nil {
			return &permanentError{fmt.Errorf("encode object: %w", err)}
		}
		req = q.client.Post().AbsPath(apiresource.Path(a.Resource, a.Namespace, "", a.Subresource)...).
			SetHeader("Content-Type", runtime.ContentTypeJSON).Body(body).Param("fieldManager", FieldManager)
	case Apply:
		body, err := json.Marshal(a.Object)
		if err != nil {
			return &permanentError{fmt.Errorf("encode object: %w", err)}
		}
		req = q.client.Patch(types.ApplyPatchType).AbsPath(apiresource.Path(a.Resource, a.Namespace, a.Name, a.Subresource)...).
			Body(body).Param("fieldManager", FieldManager).Param("force", "true")
	case Patch:
		req = q.client.Patch(a.PatchType).AbsPath(apiresource.Path(a.Resource, a.Namespace, a.Name, a.Subresource)...).
			Body(a.PatchData).Param("fieldManager", FieldManager)
	case Delete:
		policy := metav1.DeletePropagationBackground
		body, err := json.Marshal(&metav1.DeleteOptions{
			TypeMeta:          metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
			PropagationPolicy: &policy,
			DryRun:            dryRun,
		})
		if err != nil {
			return err
		}
		req = q.client.Delete().AbsPath(apiresource.Path(a.Resource, a.Namespace, a.Name, "")...).
			SetHeader("Content-Type", runtime.ContentTypeJSON).Body(body)
	}
	for _, d := range dryRun {
		req.Param("dryRun", d)
	}
	err := req.Do(ctx).Error()
	switch {
	case a.Verb == Create && apierrors.IsAlreadyExists(err):
		q.log.Debug("create: already exists", actionAttrs(a)...)
		return nil
	case a.Verb == Delete && apierrors.IsNotFound(err):
		return nil
	}
	return err
}

// setCondition reads the object's status.conditions from the API server
// (a cached copy may be behind what another writer did since), merges
// a.Condition in with MergeCondition and, when that changes something,
// writes the conditions back with a merge patch that carries the
// resourceVersion read: if the object changed in between, the API server
// answers 409 Conflict and the action is retried, reading again. So the
// generation read is the one a write to the object itself moves on
// (MergeConditionInObject). An object that is gone needs no condition.
func (q *Queue) setCondition(ctx context.Context, a Action, dryRun []string) error {
	if a.Condition == nil {
		return &permanentError{errors.New("condition action without a condition")}
	}
	path := apiresource.Path(a.Resource, a.Namespace, a.Name, a.Subresource)
	data, err := q.client.Get().AbsPath(path...).SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		q.log.Debug("condition: the object is gone", actionAttrs(a)...)
		return nil
	}
	if err != nil {
		return err
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			Generation      int64  `json:"generation"`
		} `json:"metadata"`
		Status struct {
			Conditions any `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return &permanentError{fmt.Errorf("decode object: %w", err)}
	}
	var merged []any
	var changed bool
	if a.Subresource == "" {
		// Written with the object itself, which moves its generation.
		merged, changed, err = MergeConditionInObject(obj.Status.Conditions, *a.Condition, obj.Metadata.Generation, time.Now())
	} else {
		merged, changed, err = MergeCondition(obj.Status.Conditions, *a.Condition, time.Now())
	}
	if err != nil {
		return &permanentError{err}
	}
	if !changed {
		q.log.Debug("condition: unchanged", actionAttrs(a)...)
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": obj.Metadata.ResourceVersion},
		"status":   map[string]any{"conditions": merged},
	})
	if err != nil {
		return &permanentError{fmt.Errorf("encode patch: %w", err)}
	}
	req := q.client.Patch(types.MergePatchType).AbsPath(path...).Body(body).Param("fieldManager", FieldManager)
	for _, d := range dryRun {
		req.Param("dryRun", d)
	}
	return req.Do(ctx).Error()
}

func (q *Queue) sendHTTP(ctx context.Context, a Action) error {
	r := a.Request
	if r == nil {
		return &permanentError{errors.New("http action without a request")}
	}
	if a.DryRun {
		return nil
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return &permanentError{err}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	resp, err := q.opts.HTTPClient.Do(req)
	var refused *redirectError
	if errors.As(err, &refused) {
		return &permanentError{refused}
	}
	if err != nil {
		// Refused, reset, no such host, timed out: the target did not
		// answer. (A *url.Error is a net.Error, so without this type the
		// queue would take it for the API server being down.)
		return &webhookError{err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch code := resp.StatusCode; {
	case code < 300:
		return nil
	case code >= 500, code == http.StatusTooManyRequests, code == http.StatusRequestTimeout:
		// The target is there but cannot serve now; 429 and 408 say
		// "try again later" outright.
		return &webhookError{status: code, err: fmt.Errorf("HTTP %s", resp.Status)}
	default:
		return &permanentError{fmt.Errorf("HTTP %s", resp.Status)}
	}
}

// maxRedirects bounds the requests of one HTTP action, redirects included,
// as in Go's default client (which follows 9 redirects).
const maxRedirects = 10

// redirectError is a redirect the queue refused to follow.
type redirectError struct {
	target string
	err    error
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("redirect to %s refused: %v", e.target, e.err)
}
func (e *redirectError) Unwrap() error { return e.err }

// checkRedirect is the CheckRedirect of the queue's HTTP client: it
// follows a redirect only to a URL allow accepts, and a 307 or 308 (which
// re-send the body and method) only within the origin of the first
// request. Go's client keeps custom headers on every redirect, so a
// redirect it follows may receive nothing the rule could not have sent
// there itself.
func checkRedirect(allow func(string) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		target := req.URL.String()
		refuse := func(err error) error { return &redirectError{target: target, err: err} }
		switch {
		case allow == nil:
			return refuse(errors.New("redirects are not followed"))
		case len(via) >= maxRedirects:
			return refuse(fmt.Errorf("stopped after %d requests", len(via)))
		}
		if err := allow(target); err != nil {
			return refuse(err)
		}
		if req.Response != nil && (req.Response.StatusCode == http.StatusTemporaryRedirect || req.Response.StatusCode == http.StatusPermanentRedirect) &&
			origin(req.URL) != origin(via[0].URL) {
			return refuse(fmt.Errorf("a %d would send the body to another origin than %s", req.Response.StatusCode, origin(via[0].URL)))
		}
		return nil
	}
}

// origin is u's scheme, host and port, the default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// eventNamespace is where an Event about a's target lives: the object's
// namespace, or "default" for cluster-scoped objects, as kubectl does.
func eventNamespace(a Action) string {
	if a.Namespace != "" {
		return a.Namespace
	}
	return metav1.NamespaceDefault
}

// eventObject builds a core/v1 Event about the action's target.
func eventObject(a Action, now time.Time) *unstructured.Unstructured {
	ts := now.UTC().Format(time.RFC3339)
	eventType := a.EventType
	if eventType == "" {
		eventType = "Normal"
	}
	involved := map[string]any{
		"apiVersion": a.APIVersion,
		"kind":       a.Kind,
		"name":       a.Name,
	}
	if a.Namespace != "" {
		involved["namespace"] = a.Namespace
	}
	if a.UID != "" {
		involved["uid"] = string(a.UID)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata": map[string]any{
			"generateName": strings.ToLower(a.Name) + ".",
			"namespace":    eventNamespace(a),
		},
		"involvedObject":     involved,
		"type":               eventType,
		"reason":             a.Reason,
		"message":            a.Message,
		"source":             map[string]any{"component": "kreact"},
		"reportingComponent": "kreact",
		"reportingInstance":  a.Rule,
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              int64(1),
	}}
}

func describeTarget(a Action) string {
	if a.Verb == HTTP && a.Request != nil {
		return a.Request.URL
	}
	name := a.Name
	if a.Namespace != "" {
		name = a.Namespace + "/" + name
	}
	if a.Subresource != "" {
		name += " (" + a.Subresource + ")"
	}
	return a.Resource.GroupResource().String() + " " + name
}

// errorClass says what to do about a failed attempt.
type errorClass int

const (
	done                 errorClass = iota // no error
	retriable                              // try again, up to the retry limit
	apiServerUnreachable                   // the API server is not there: wait, no limit
	webhookDown                            // an HTTP target did not answer or failed: retry, up to the limit
	permanent                              // retrying cannot help
)

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// webhookError is an HTTP action's target that did not answer (status 0)
// or answered that it cannot serve now (5xx, 429, 408). It is its own
// class because the reasoning behind waiting for the API server does not
// hold for it: the API server comes back (and nothing else works until it
// does), a webhook may stay down for good, and its actions must not pile
// up behind it forever.
type webhookError struct {
	status int
	err    error
}

func (e *webhookError) Error() string { return e.err.Error() }
func (e *webhookError) Unwrap() error { return e.err }

// webhookProblem names what happened to a webhook in a log message:
// "webhook unreachable" or "webhook failing".
func webhookProblem(err error) string {
	var we *webhookError
	if errors.As(err, &we) && we.status != 0 {
		return "webhook failing"
	}
	return "webhook unreachable"
}

func classify(err error) errorClass {
	var perm *permanentError
	var hook *webhookError
	switch {
	case err == nil:
		return done
	case errors.As(err, &perm):
		return permanent
	case errors.As(err, &hook):
		// Before the transport checks below, which stand for the API server.
		return webhookDown
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err), apierrors.IsInvalid(err),
		apierrors.IsBadRequest(err), apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err):
		return permanent
	case unreachable.Is(err):
		return apiServerUnreachable
	default:
		return retriable
	}
}
