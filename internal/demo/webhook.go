package demo

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// WebhookAddr is where the notify-failures example rule posts.
const WebhookAddr = "127.0.0.1:8099"

// Receiver is a webhook endpoint that records the notifications it gets.
type Receiver struct {
	mu       sync.Mutex
	messages []string
	onText   func(string)
	srv      *http.Server
}

// StartReceiver listens on addr until ctx ends. onText, if set, is called
// with each notification's text.
func StartReceiver(ctx context.Context, addr string, onText func(string)) (*Receiver, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &Receiver{onText: onText}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go func() {
		if err := r.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	go func() {
		<-ctx.Done()
		_ = r.srv.Close()
	}()
	return r, nil
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var msg struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		msg.Text = string(body)
	}
	r.mu.Lock()
	r.messages = append(r.messages, msg.Text)
	r.mu.Unlock()
	if r.onText != nil {
		r.onText(msg.Text)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Messages returns the texts received so far.
func (r *Receiver) Messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.messages...)
}
