package diag

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a value a user wrote (a name, a path, a
// URL) a message quotes; longer values are cut and end with "…", so that a
// 10 MB name does not make a 10 MB error line.
const MaxQuoted = 100

// maxMessage bounds a whole message of an Error, whatever it quotes.
const maxMessage = 2000

// Shorten returns s cut to at most MaxQuoted bytes, at a character
// boundary, followed by "…" when it was cut.
func Shorten(s string) string { return shorten(s, MaxQuoted) }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Quote returns s shortened by Shorten and quoted, for messages.
func Quote(s string) string { return strconv.Quote(Shorten(s)) }

// maxErrorArg bounds the message of an error a message quotes: a
// parser's error may echo its whole input.
const maxErrorArg = 300

// shortError is an error whose message is cut to maxErrorArg bytes.
type shortError struct{ err error }

func (e shortError) Error() string { return shorten(e.err.Error(), maxErrorArg) }
func (e shortError) Unwrap() error { return e.err }

// shortArgs shortens the arguments of format: the values it quotes (%q),
// which are what a user wrote, to MaxQuoted bytes; other strings, and the
// messages of errors (a parser's error may quote its whole input), to half
// a message.
func shortArgs(format string, args []any) []any {
	verbs := verbsOf(format)
	out := make([]any, len(args))
	for i, a := range args {
		quoted := i < len(verbs) && verbs[i] == 'q'
		switch a := a.(type) {
		case string:
			if quoted {
				out[i] = Shorten(a)
			} else {
				out[i] = shorten(a, maxMessage/2)
			}
		case error:
			var ue *url.Error
			if errors.As(a, &ue) {
				a = ue.Err
			}
			out[i] = shortError{a}
		default:
			out[i] = a
		}
	}
	return out
}

// verbsOf returns the verb letter of each argument format takes, in order
// (formats here use no explicit argument indexes).
func verbsOf(format string) []byte {
	var verbs []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.*", format[i]) >= 0 {
			if format[i] == '*' {
				verbs = append(verbs, '*')
			}
			i++
		}
		if i < len(format) && format[i] != '%' {
			verbs = append(verbs, format[i])
		}
	}
	return verbs
}

// Sprintf is fmt.Sprintf with its arguments shortened: the values it
// quotes (%q), which are what a user wrote, to MaxQuoted bytes; other
// strings, and the messages of errors, to half a message.
func Sprintf(format string, args ...any) string {
	return fmt.Sprintf(format, shortArgs(format, args)...)
}

// Errorf is fmt.Errorf with its arguments shortened as Sprintf shortens
// them; an error it wraps with %w is still found by errors.Is and errors.As.
func Errorf(format string, args ...any) error {
	return fmt.Errorf(format, shortArgs(format, args)...)
}
