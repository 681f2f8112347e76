package actions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	refused := func(u string) error {
		return &url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	}
	cm := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name string
		err  error
		want errorClass
	}{
		{"no error", nil, done},
		{"API server refuses connections", fmt.Errorf("create configmaps x: %w", refused("https://api:6443/api/v1/configmaps")), apiServerUnreachable},
		{"API server 503", apierrors.NewServiceUnavailable("restarting"), apiServerUnreachable},
		{"API server 429", apierrors.NewTooManyRequests("slow down", 1), apiServerUnreachable},
		{"API server conflict", apierrors.NewConflict(cm, "x", errors.New("changed")), retriable},
		{"API server forbidden", apierrors.NewForbidden(cm, "x", errors.New("no")), permanent},
		{"webhook refuses connections", fmt.Errorf("http http://hook: %w", &webhookError{err: refused("http://hook")}), webhookDown},
		{"webhook timeout", &webhookError{err: &url.Error{Op: "Post", URL: "http://hook", Err: context.DeadlineExceeded}}, webhookDown},
		{"webhook 500", fmt.Errorf("http http://hook: %w", &webhookError{status: 500, err: errors.New("HTTP 500 Internal Server Error")}), webhookDown},
		{"webhook 404", &permanentError{errors.New("HTTP 404 Not Found")}, permanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != tt.want {
				t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestWebhookProblem(t *testing.T) {
	if got := webhookProblem(fmt.Errorf("x: %w", &webhookError{err: errors.New("refused")})); got != "webhook unreachable" {
		t.Errorf("no answer: %q", got)
	}
	if got := webhookProblem(&webhookError{status: 502, err: errors.New("HTTP 502")}); got != "webhook failing" {
		t.Errorf("502: %q", got)
	}
}
