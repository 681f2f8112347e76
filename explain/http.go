package explain

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Path is where Handler answers.
const Path = "/explain"

// Errors that a Source returns, and Ask, so that a command maps them to
// exit codes.
var (
	// ErrUnknownResource: the resource named resolves to none the
	// cluster serves (the error says which names come close).
	ErrUnknownResource = errors.New("unknown resource")
	// ErrNotFound: the object does not exist, and no rule has a record
	// of it.
	ErrNotFound = errors.New("not found")
	// ErrUnreachable: no kreact answers at the address.
	ErrUnreachable = errors.New("kreact cannot be reached")
)

// Source answers about the object of resource (as a user writes it:
// "deploy", "deployments.apps"…) named namespace/name.
type Source func(ctx context.Context, resource, namespace, name string) (*Object, error)

// errorBody is the answer of a request that failed.
type errorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason,omitempty"`
}

// Handler answers GET Path?resource=R&namespace=NS&name=N with the JSON
// of src's Object. It only reads; serve it where only the Pod reaches it
// (see the package doc).
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		res, name := q.Get("resource"), q.Get("name")
		if res == "" || name == "" {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(errorBody{Error: "resource and name are required"})
			return
		}
		o, err := src(r.Context(), res, q.Get("namespace"), name)
		if err != nil {
			body := errorBody{Error: err.Error()}
			status := http.StatusInternalServerError
			switch {
			case errors.Is(err, ErrUnknownResource):
				status, body.Reason = http.StatusBadRequest, "UnknownResource"
			case errors.Is(err, ErrNotFound):
				status, body.Reason = http.StatusNotFound, "NotFound"
			}
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(body)
			return
		}
		_ = json.NewEncoder(w).Encode(o)
	})
	return mux
}

// Ask asks the kreact that serves Handler at addr (host:port) about an
// object. Its errors wrap ErrUnreachable, ErrUnknownResource or
// ErrNotFound when they are so.
func Ask(ctx context.Context, addr, resource, namespace, name string) (*Object, error) {
	q := url.Values{"resource": {resource}, "name": {name}}
	if namespace != "" {
		q.Set("namespace", namespace)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+Path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w at %s (is kreact run started with --explain-address %s?): %w", ErrUnreachable, addr, addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		var body errorBody
		if json.Unmarshal(data, &body) != nil || body.Error == "" {
			return nil, fmt.Errorf("%s answered %s", addr, resp.Status)
		}
		switch body.Reason {
		case "UnknownResource":
			return nil, &remoteError{body.Error, ErrUnknownResource}
		case "NotFound":
			return nil, &remoteError{body.Error, ErrNotFound}
		}
		return nil, errors.New(body.Error)
	}
	var o Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decode the answer of %s: %w", addr, err)
	}
	return &o, nil
}

// remoteError is an error the server told, as it told it, of a kind
// (ErrUnknownResource, ErrNotFound) that errors.Is finds.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// AddressEnv names the environment variable that gives kreact explain the
// address to ask when its --address is not given.
const AddressEnv = "KREACT_EXPLAIN_ADDRESS"

// DefaultAddress is the address kreact explain asks by default; the
// manifests in deploy/ would pass the same to kreact run.
const DefaultAddress = "127.0.0.1:8083"

// Address is the address kreact explain asks: flag, else AddressEnv in
// getenv, else DefaultAddress.
func Address(flag string, getenv func(string) string) string {
	return cmp.Or(flag, getenv(AddressEnv), DefaultAddress)
}
