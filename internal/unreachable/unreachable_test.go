package unreachable

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIs(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	refused := &url.Error{Op: "Post", URL: "https://api:6443", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"connection refused", fmt.Errorf("create: %w", refused), true},
		{"connection reset, as text", errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"), true},
		{"EOF while the server restarts", fmt.Errorf("watch: %w", io.EOF), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"lost HTTP/2 connection", errors.New("http2: client connection lost"), true},
		{"a name that does not resolve yet", errors.New("dial tcp: lookup api: no such host"), true},
		{"503", apierrors.NewServiceUnavailable("restarting"), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"504", apierrors.NewTimeoutError("slow", 1), true},
		{"server timeout", apierrors.NewServerTimeout(cm, "list", 1), true},
		{"500", apierrors.NewInternalError(errors.New("boom")), false},
		{"500 from an admission webhook that cannot be reached", apierrors.NewInternalError(errors.New(
			`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.default.svc:443/validate?timeout=10s": dial tcp 10.0.0.1:443: connect: connection refused`)), true},
		{"conflict", apierrors.NewConflict(cm, "x", errors.New("changed")), false},
		{"forbidden", apierrors.NewForbidden(cm, "x", errors.New("no")), false},
		{"not found", apierrors.NewNotFound(cm, "x"), false},
		{"gone", apierrors.NewResourceExpired("too old"), false},
	} {
		if got := Is(c.err); got != c.want {
			t.Errorf("%s: Is(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
