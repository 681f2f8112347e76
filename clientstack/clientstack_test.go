package clientstack_test

import (
	"log/slog"
	"net"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/clientstack"
)

// A cluster that cannot be reached is an error that names it, from the
// first discovery, before anything starts.
func TestConnectNamesAServerItCannotReach(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + l.Addr().String()
	_ = l.Close() // nothing listens there now: connections are refused
	for name, connect := range map[string]func() (*clientstack.Stack, error){
		"Connect": func() (*clientstack.Stack, error) {
			return clientstack.Connect(t.Context(), &rest.Config{Host: host}, clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
		},
		"New": func() (*clientstack.Stack, error) {
			return clientstack.New(t.Context(), &rest.Config{Host: host}, clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
		},
		"Start": func() (*clientstack.Stack, error) {
			return clientstack.Start(t.Context(), &rest.Config{Host: host}, clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := connect()
			if err == nil {
				t.Fatalf("got a stack %v for a server that is not there", s)
			}
			if want := "discover the API of " + host; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}
