package dynamicinformer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// transcoder turns the JSON of an object, as the API server sends it, into
// the compact form in one pass, without building the maps of a decoded
// object first: decoding watch events into maps was the largest cost of
// kreact's whole path (most of it the four passes of client-go's JSON
// decoding over each event, then the maps), and the compact form was then
// encoded from those maps. It drops what stripForCache drops as it reads.
//
// Its result is the compact form of what the unstructured JSON decoder
// makes of the same bytes, stripped: integers that fit int64 as int64,
// other numbers as float64, strings unescaped (invalid UTF-8 replaced, as
// encoding/json does), keys in the order they come. TestTranscodeMatches
// holds it to that.
//
// Values that are dropped (managedFields, the last-applied annotation)
// are skipped by their brackets and quotes without being checked
// further: only the API server's well-formed JSON is read here.
type transcoder struct {
	data []byte
	off  int
	e    encoder
	// scratch holds a string that had to be unescaped, until the next.
	scratch []byte
	// hasKind and hasAPIVersion say whether the object's kind and
	// apiVersion are non-empty strings; kind is the kind.
	kind                   []byte
	hasKind, hasAPIVersion bool
	// item is set for the items of a list, which need no kind: those
	// that have neither a kind nor an apiVersion get defaultKind and
	// defaultAPIVersion (a typed list's items, which the API server sends
	// without them), as the unstructured decoder does.
	item                           bool
	defaultKind, defaultAPIVersion string
}

// maxDepth is how deeply values may nest, as in encoding/json.
const maxDepth = 10000

// where says which map a transcoder reads: the strip rules apply to the
// object's metadata and its annotations only.
type where int

const (
	inValue where = iota
	inObject
	inMetadata
	inAnnotations
)

// transcodeObject returns the compact form of the JSON object data.
func transcodeObject(data []byte) (compactObject, error) {
	var t transcoder
	return t.object(data)
}

// object transcodes one object, which must fill data (but for
// whitespace) and have a kind.
func (t *transcoder) object(data []byte) (compactObject, error) {
	t.data, t.off = data, 0
	t.e = newEncoder()
	t.hasKind, t.hasAPIVersion, t.kind = false, false, t.kind[:0]
	err := t.topValue()
	o := t.e.finish()
	if err != nil {
		return compactObject{}, err
	}
	if !t.hasKind && !t.item {
		return compactObject{}, fmt.Errorf("object has no kind: %.100s", data)
	}
	return o, nil
}

// topValue reads the object at t.off and checks that nothing follows.
func (t *transcoder) topValue() error {
	t.ws()
	if t.off >= len(t.data) || t.data[t.off] != '{' {
		return t.fail("expected an object")
	}
	if _, err := t.mapping(inObject, 1); err != nil {
		return err
	}
	t.ws()
	if t.off != len(t.data) {
		return t.fail("data after the object")
	}
	return nil
}

type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg) }

func (t *transcoder) fail(msg string) error { return &syntaxError{msg, t.off} }

func (t *transcoder) ws() {
	for t.off < len(t.data) {
		switch t.data[t.off] {
		case ' ', '\t', '\n', '\r':
			t.off++
		default:
			return
		}
	}
}

// next returns the byte at t.off after whitespace, or 0 at the end.
func (t *transcoder) next() byte {
	t.ws()
	if t.off >= len(t.data) {
		return 0
	}
	return t.data[t.off]
}

// value transcodes the value at t.off.
func (t *transcoder) value(depth int) error {
	switch c := t.next(); c {
	case '{':
		_, err := t.mapping(inValue, depth+1)
		return err
	case '[':
		return t.list(depth + 1)
	case '"':
		s, err := t.str()
		if err != nil {
			return err
		}
		t.e.buf = append(t.e.buf, 's')
		t.e.strBytes(s)
		return nil
	case 't':
		return t.literal("true", 't')
	case 'f':
		return t.literal("false", 'f')
	case 'n':
		return t.literal("null", 'n')
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return t.number()
		}
		return t.fail("expected a value")
	}
}

func (t *transcoder) literal(word string, tag byte) error {
	if !bytes.HasPrefix(t.data[t.off:], []byte(word)) {
		return t.fail("expected " + word)
	}
	t.off += len(word)
	t.e.buf = append(t.e.buf, tag)
	return nil
}

// mapping transcodes the map at t.off ('{') and returns how many entries
// it wrote.
func (t *transcoder) mapping(at where, depth int) (int, error) {
	if depth > maxDepth {
		return 0, t.fail("nested too deeply")
	}
	p := t.e.open('m')
	n := 0
	err := t.members(func(key []byte) error {
		kept, err := t.entry(at, key, depth)
		n += kept
		return err
	})
	if err != nil {
		return 0, err
	}
	if at == inObject && t.item && !t.hasKind && !t.hasAPIVersion {
		appendKey(&t.e, "kind")
		t.e.buf = append(t.e.buf, 's')
		t.e.str(t.defaultKind)
		appendKey(&t.e, "apiVersion")
		t.e.buf = append(t.e.buf, 's')
		t.e.str(t.defaultAPIVersion)
		n += 2
	}
	t.e.close(p, n)
	return n, nil
}

// members calls f for each member of the JSON object at t.off, with t at
// the member's value, which f must read or skip. key is valid until f
// reads another string (it may be t.scratch). An error of f ends it.
func (t *transcoder) members(f func(key []byte) error) error {
	if t.next() != '{' {
		return t.fail("expected an object")
	}
	t.off++
	if t.next() == '}' {
		t.off++
		return nil
	}
	for {
		key, err := t.str()
		if err != nil {
			return err
		}
		if t.next() != ':' {
			return t.fail("expected ':'")
		}
		t.off++
		if err := f(key); err != nil {
			return err
		}
		switch t.next() {
		case ',':
			t.off++
		case '}':
			t.off++
			return nil
		default:
			return t.fail("expected ',' or '}'")
		}
	}
}

// elements calls f for each element of the JSON list at t.off, with t at
// the element, which f must read or skip. An error of f ends it.
func (t *transcoder) elements(f func() error) error {
	if t.next() != '[' {
		return t.fail("expected a list")
	}
	t.off++
	if t.next() == ']' {
		t.off++
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		switch t.next() {
		case ',':
			t.off++
		case ']':
			t.off++
			return nil
		default:
			return t.fail("expected ',' or ']'")
		}
	}
}

// entry transcodes the value of key in a map of kind at, and returns 1,
// or 0 if the entry is dropped.
func (t *transcoder) entry(at where, key []byte, depth int) (int, error) {
	switch at {
	case inObject:
		switch string(key) {
		case "metadata":
			if t.next() == '{' {
				appendKey(&t.e, key)
				_, err := t.mapping(inMetadata, depth+1)
				return 1, err
			}
		case "kind", "apiVersion":
			if t.next() == '"' {
				isKind := key[0] == 'k'
				appendKey(&t.e, key)
				s, err := t.str()
				if err != nil {
					return 0, err
				}
				if len(s) > 0 {
					if isKind {
						t.hasKind, t.kind = true, append(t.kind[:0], s...)
					} else {
						t.hasAPIVersion = true
					}
				}
				t.e.buf = append(t.e.buf, 's')
				t.e.strBytes(s)
				return 1, nil
			}
		}
	case inMetadata:
		switch string(key) {
		case "managedFields":
			return 0, t.skip()
		case "annotations":
			if t.next() == '{' {
				mark := len(t.e.buf)
				appendKey(&t.e, key)
				n, err := t.mapping(inAnnotations, depth+1)
				if n == 0 {
					// Nothing left: dropped, as stripForCache does.
					t.e.buf = t.e.buf[:mark]
					return 0, err
				}
				return 1, err
			}
		default:
			if i := metaIndex(string(key)); i >= 0 && t.next() == '"' {
				appendKey(&t.e, key)
				s, err := t.str()
				if err != nil {
					return 0, err
				}
				appendIdentity(&t.e, i, s)
				return 1, nil
			}
		}
	case inAnnotations:
		if string(key) == LastAppliedAnnotation {
			return 0, t.skip()
		}
	}
	appendKey(&t.e, key)
	return 1, t.value(depth)
}

// list transcodes the list at t.off ('[').
func (t *transcoder) list(depth int) error {
	if depth > maxDepth {
		return t.fail("nested too deeply")
	}
	p := t.e.open('l')
	n := 0
	err := t.elements(func() error {
		n++
		return t.value(depth)
	})
	if err != nil {
		return err
	}
	t.e.close(p, n)
	return nil
}

// str reads the string at t.off and returns its bytes: a part of t.data,
// or, if it had to be unescaped, t.scratch until the next call.
func (t *transcoder) str() ([]byte, error) {
	if t.next() != '"' {
		return nil, t.fail("expected a string")
	}
	start := t.off + 1
	ascii := true
	for i := start; i < len(t.data); i++ {
		switch c := t.data[i]; {
		case c == '"':
			t.off = i + 1
			s := t.data[start:i]
			if ascii || utf8.Valid(s) {
				return s, nil
			}
			return t.unquote(start-1, i+1)
		case c == '\\':
			end, err := t.stringEnd(i)
			if err != nil {
				return nil, err
			}
			t.off = end
			return t.unquote(start-1, end)
		case c < 0x20:
			t.off = i
			return nil, t.fail("control character in a string")
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, t.fail("unterminated string")
}

// stringEnd returns the offset after the closing quote of the string that
// goes on at i.
func (t *transcoder) stringEnd(i int) (int, error) {
	for ; i < len(t.data); i++ {
		switch t.data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	t.off = len(t.data)
	return 0, t.fail("unterminated string")
}

// unquote decodes the quoted string data[from:to] as encoding/json does:
// escapes, and invalid UTF-8 replaced.
func (t *transcoder) unquote(from, to int) ([]byte, error) {
	var s string
	if err := json.Unmarshal(t.data[from:to], &s); err != nil {
		return nil, fmt.Errorf("invalid JSON string at byte %d: %w", from, err)
	}
	t.scratch = append(t.scratch[:0], s...)
	return t.scratch, nil
}

// number transcodes the number at t.off as the unstructured decoder
// converts it: an int64 when it has no '.' and fits, a float64 if not.
func (t *transcoder) number() error {
	start := t.off
	i := start
	if t.data[i] == '-' {
		i++
	}
	digits := func() bool {
		from := i
		for i < len(t.data) && t.data[i] >= '0' && t.data[i] <= '9' {
			i++
		}
		return i > from
	}
	switch {
	case i < len(t.data) && t.data[i] == '0':
		i++
	case !digits():
		t.off = i
		return t.fail("invalid number")
	}
	integer := true
	if i < len(t.data) && t.data[i] == '.' {
		i++
		integer = false
		if !digits() {
			t.off = i
			return t.fail("invalid number")
		}
	}
	if i < len(t.data) && (t.data[i] == 'e' || t.data[i] == 'E') {
		i++
		if i < len(t.data) && (t.data[i] == '+' || t.data[i] == '-') {
			i++
		}
		if !digits() {
			t.off = i
			return t.fail("invalid number")
		}
	}
	t.off = i
	lit := string(t.data[start:i])
	if integer {
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			t.e.int(n)
			return nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return fmt.Errorf("invalid JSON number %s: %w", lit, err)
	}
	t.e.float(f)
	return nil
}

// skip moves t.off past the value there by its brackets and quotes (see
// transcoder).
func (t *transcoder) skip() error {
	t.ws()
	start, depth := t.off, 0
	for t.off < len(t.data) {
		switch t.data[t.off] {
		case '"':
			end, err := t.stringEnd(t.off + 1)
			if err != nil {
				return err
			}
			t.off = end
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return t.skipped(start)
			}
			depth--
			if depth == 0 {
				t.off++
				return nil
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return t.skipped(start)
			}
		}
		t.off++
	}
	if depth > 0 {
		return t.fail("unterminated value")
	}
	return t.skipped(start)
}

// skipped checks that a scalar was skipped from start.
func (t *transcoder) skipped(start int) error {
	if t.off == start {
		return t.fail("expected a value")
	}
	return nil
}
