package rules

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FieldPath is a path to a field of an object, one map key per element:
// {"metadata", "annotations", "example.com/restartedAt"}.
type FieldPath []string

// ParseFieldPath parses the syntax of spec.ignoreChanges: map keys separated
// by dots, and keys that are not plain names (letters, digits, '-', '_')
// in brackets and quotes:
//
//	status
//	metadata.labels
//	metadata.annotations["example.com/restartedAt"]
//	.spec.replicas                      (a leading dot is allowed)
//
// It is also the syntax of spec.watch[].fields. List indexes and
// wildcards are not supported: write the path of the whole list.
func ParseFieldPath(s string) (FieldPath, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty path")
	}
	var p FieldPath
	rest := strings.TrimPrefix(s, ".")
	for first := true; rest != ""; first = false {
		switch {
		case rest[0] == '[':
			key, n, err := parseBracket(rest)
			if err != nil {
				return nil, err
			}
			p = append(p, key)
			rest = rest[n:]
		case !first && rest[0] != '.':
			return nil, fmt.Errorf("unexpected %q after %q; want '.' or '['", rest[0], FieldPath(p).String())
		default:
			if !first {
				rest = rest[1:]
			}
			n := 0
			for n < len(rest) && isNameByte(rest[n]) {
				n++
			}
			if n == 0 {
				if rest == "" {
					return nil, errors.New("path ends with '.'")
				}
				if rest[0] == '[' && !first {
					return nil, errors.New("unexpected '[' after '.'; write a[\"b\"], not a.[\"b\"]")
				}
				return nil, fmt.Errorf("unexpected %q; quote keys that are not plain names: [\"my.key\"]", rest[0])
			}
			p = append(p, rest[:n])
			rest = rest[n:]
		}
	}
	return p, nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// parseBracket parses ["key"] or ['key'] at the start of s and returns the
// key and how many bytes it took.
func parseBracket(s string) (string, int, error) {
	if len(s) < 2 || (s[1] != '"' && s[1] != '\'') {
		if len(s) > 1 && s[1] >= '0' && s[1] <= '9' || strings.HasPrefix(s, "[*]") {
			return "", 0, errors.New("list indexes and wildcards are not supported; write the path of the whole list")
		}
		return "", 0, errors.New("want a quoted key after '[', like [\"example.com/key\"]")
	}
	q := s[1]
	end := -1
	for i := 2; i < len(s); i++ {
		if q == '"' && s[i] == '\\' {
			i++
			continue
		}
		if s[i] == q {
			end = i
			break
		}
	}
	if end < 0 || end+1 >= len(s) || s[end+1] != ']' {
		return "", 0, errors.New("unterminated [\"...\"]")
	}
	key := s[2:end]
	if q == '"' {
		var err error
		if key, err = strconv.Unquote(s[1 : end+1]); err != nil {
			return "", 0, fmt.Errorf("bad quoted key %s", s[1:end+1])
		}
	}
	if key == "" {
		return "", 0, errors.New("empty key in [\"\"]")
	}
	return key, end + 2, nil
}

// String returns the path in the syntax ParseFieldPath reads.
func (p FieldPath) String() string {
	var b strings.Builder
	for i, k := range p {
		plain := k != ""
		for j := 0; j < len(k) && plain; j++ {
			plain = isNameByte(k[j])
		}
		switch {
		case !plain:
			b.WriteString("[" + strconv.Quote(k) + "]")
		case i > 0:
			b.WriteString("." + k)
		default:
			b.WriteString(k)
		}
	}
	return b.String()
}

// Equal reports whether p and q are the same path.
func (p FieldPath) Equal(q FieldPath) bool { return slices.Equal(p, q) }

// key returns a string that is equal for two paths exactly when they are
// Equal, for maps.
func (p FieldPath) key() string {
	var b strings.Builder
	for _, k := range p {
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return b.String()
}
