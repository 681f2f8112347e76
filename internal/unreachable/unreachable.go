package unreachable

import (
	"errors"
	"io"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Is reports whether err means that the API server could not be reached
// or cannot serve now, so that the same request may succeed later.
func Is(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		errors.As(err, &netErr) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		connectionMessage(err.Error())
}

// connectionMessages are transport failures that client-go reports as
// plain text, without an error value to match.
var connectionMessages = []string{
	"connection refused", "connection reset", "http2: client connection lost", "i/o timeout", "no such host", "EOF",
}

func connectionMessage(msg string) bool {
	for _, s := range connectionMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
