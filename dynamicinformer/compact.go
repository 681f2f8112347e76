package dynamicinformer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// compactObject is how an informer's cache holds an object: its JSON data
// encoded in one immutable string, and the four metadata strings the
// informer and its handlers read without decoding (substrings of it).
//
// A decoded object (unstructured.Unstructured) is a tree of maps, one
// allocation per map, string and number; its maps alone took about as
// much memory as its strings (heap profile of 100,000 ConfigMaps). The
// compact form is one allocation about the size of the object's JSON.
// Decoding builds the maps again, but not the strings: those of the
// decoded object are substrings of the compact one.
//
// The encoding is a tag byte per value: 'n' null, 't' true, 'f' false,
// 'i' a zig-zag varint, 'd' 8 bytes of float64 bits, 's' a uvarint length
// and the bytes, 'm' a uvarint count and that many (key, value), 'l' a
// uvarint count and that many values. A key is a uvarint u: for an even
// u, u/2 bytes of key follow; for an odd u, the key is knownKeys[u/2],
// one byte for the keys every object has (see knownKeys).
type compactObject struct {
	data string
	// meta is where the four metadata strings are in data (indexed by
	// metaNamespace…), as start and end offsets; both zero when absent.
	// Offsets rather than substrings: 32 bytes per object rather than
	// 64, which at a million cached objects is 32 MB. An object is at
	// most a few MiB (the API server's request limit), far below 4 GiB.
	meta [numMeta][2]uint32
}

// metaString returns the metadata string i (metaNamespace…) of o.
func (o *compactObject) metaString(i int) string {
	return o.data[o.meta[i][0]:o.meta[i][1]]
}

var (
	_ runtime.Object = (*compactObject)(nil)
	_ metav1.Object  = (*compactObject)(nil)
)

// compact encodes u. Values that are not JSON data (a typed value a
// careless producer left in an object) go through encoding/json first.
func compact(u *unstructured.Unstructured) *compactObject {
	e := newEncoder()
	e.value(u.Object, 0, false)
	o := e.finish()
	return &o
}

// encodeBuffers keeps the buffers objects are encoded in: an object is
// copied out of its buffer once encoded, and the buffer grown for it
// would otherwise be garbage at every change. Buffers grown beyond
// maxPooledBuffer (a huge object) are left to the collector.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBuffer = 1 << 20

const (
	metaNamespace = iota
	metaName
	metaUID
	metaResourceVersion
	numMeta
)

type span struct{ start, end int }

type encoder struct {
	buf  []byte
	meta [numMeta]span
	// pooled is the encodeBuffers entry buf came from.
	pooled *[]byte
}

// newEncoder returns an encoder that writes into a buffer of
// encodeBuffers, which finish gives back.
func newEncoder() encoder {
	bp := encodeBuffers.Get().(*[]byte)
	return encoder{buf: (*bp)[:0], pooled: bp}
}

// finish returns the object encoded in e.buf, copied out of it, and
// gives the buffer back to encodeBuffers: e is not used after.
func (e *encoder) finish() compactObject {
	o := compactObject{data: string(e.buf)}
	if cap(e.buf) <= maxPooledBuffer {
		*e.pooled = e.buf
		encodeBuffers.Put(e.pooled)
	}
	e.buf, e.pooled = nil, nil
	for i, s := range e.meta {
		if s.end > s.start {
			o.meta[i] = [2]uint32{uint32(s.start), uint32(s.end)}
		}
	}
	return o
}

// open starts a map or list whose count is not known yet (the
// transcoder's): it appends tag and one byte for the count, and returns
// where that byte is.
func (e *encoder) open(tag byte) int {
	e.buf = append(e.buf, tag, 0)
	return len(e.buf) - 1
}

// close writes the count n of the map or list opened at p, making room
// when n needs more than the one byte open kept.
func (e *encoder) close(p, n int) {
	if n < 0x80 {
		e.buf[p] = byte(n)
		return
	}
	var v [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(v[:], uint64(n))
	e.buf = slices.Insert(e.buf, p+1, v[1:k]...)
	copy(e.buf[p:], v[:k])
	for i := range e.meta {
		if e.meta[i].start > p {
			e.meta[i].start += k - 1
			e.meta[i].end += k - 1
		}
	}
}

func (e *encoder) int(n int64) {
	e.buf = append(e.buf, 'i')
	e.buf = binary.AppendVarint(e.buf, n)
}

func (e *encoder) float(f float64) {
	e.buf = append(e.buf, 'd')
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

// value appends x. depth is 0 for the object, 1 for its top-level
// values; inMetadata is set for the values of the metadata map, whose
// identity strings are recorded.
func (e *encoder) value(x any, depth int, inMetadata bool) {
	switch x := x.(type) {
	case nil:
		e.buf = append(e.buf, 'n')
	case bool:
		if x {
			e.buf = append(e.buf, 't')
		} else {
			e.buf = append(e.buf, 'f')
		}
	case int64:
		e.int(x)
	case int:
		e.value(int64(x), depth, false)
	case int32:
		e.value(int64(x), depth, false)
	case float64:
		e.float(x)
	case string:
		e.buf = append(e.buf, 's')
		e.str(x)
	case map[string]any:
		e.buf = append(e.buf, 'm')
		e.buf = binary.AppendUvarint(e.buf, uint64(len(x)))
		for k, v := range x {
			appendKey(e, k)
			if inMetadata {
				if i := metaIndex(k); i >= 0 {
					if s, ok := v.(string); ok {
						appendIdentity(e, i, s)
						continue
					}
				}
			}
			e.value(v, depth+1, depth == 0 && k == "metadata")
		}
	case []any:
		e.buf = append(e.buf, 'l')
		e.buf = binary.AppendUvarint(e.buf, uint64(len(x)))
		for _, v := range x {
			e.value(v, depth+1, false)
		}
	default:
		e.value(jsonData(x), depth, inMetadata)
	}
}

// appendIdentity appends the string s, the value of the metadata key
// whose metaIndex is i, and records where it is, for finish.
func appendIdentity[S string | []byte](e *encoder, i int, s S) {
	e.buf = append(e.buf, 's')
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.meta[i] = span{len(e.buf) - len(s), len(e.buf)}
}

func (e *encoder) str(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) strBytes(s []byte) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// knownKeys are the map keys written as one byte (their index, see
// compactObject): those of every object's identity, and the most common
// ones of built-in resources. A projected ConfigMap spelled out about 85
// bytes of keys, a third of its compact form, which at a million cached
// objects is 85 MB. The list is part of the encoding: a key appended
// here changes nothing already encoded in the process, and there are at
// most 64 so that each index is one byte.
var knownKeys = [...]string{
	"apiVersion", "kind", "metadata", "name", "namespace", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
	"ownerReferences", "finalizers", "generateName", "controller", "blockOwnerDeletion",
	"spec", "status", "data", "binaryData", "type", "conditions", "lastTransitionTime", "lastUpdateTime",
	"message", "reason", "observedGeneration", "replicas", "selector", "matchLabels", "template",
	"containers", "image", "ports", "resources", "value", "key",
}

// knownKey returns the index of k in knownKeys, or -1.
func knownKey[S string | []byte](k S) int {
	switch string(k) {
	case "apiVersion":
		return 0
	case "kind":
		return 1
	case "metadata":
		return 2
	case "name":
		return 3
	case "namespace":
		return 4
	case "uid":
		return 5
	case "resourceVersion":
		return 6
	case "generation":
		return 7
	case "creationTimestamp":
		return 8
	case "deletionTimestamp":
		return 9
	case "deletionGracePeriodSeconds":
		return 10
	case "labels":
		return 11
	case "annotations":
		return 12
	case "ownerReferences":
		return 13
	case "finalizers":
		return 14
	case "generateName":
		return 15
	case "controller":
		return 16
	case "blockOwnerDeletion":
		return 17
	case "spec":
		return 18
	case "status":
		return 19
	case "data":
		return 20
	case "binaryData":
		return 21
	case "type":
		return 22
	case "conditions":
		return 23
	case "lastTransitionTime":
		return 24
	case "lastUpdateTime":
		return 25
	case "message":
		return 26
	case "reason":
		return 27
	case "observedGeneration":
		return 28
	case "replicas":
		return 29
	case "selector":
		return 30
	case "matchLabels":
		return 31
	case "template":
		return 32
	case "containers":
		return 33
	case "image":
		return 34
	case "ports":
		return 35
	case "resources":
		return 36
	case "value":
		return 37
	case "key":
		return 38
	}
	return -1
}

// appendKey appends the map key k (see compactObject).
func appendKey[S string | []byte](e *encoder, k S) {
	if i := knownKey(k); i >= 0 {
		e.buf = append(e.buf, byte(i<<1|1))
		return
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(k))<<1)
	e.buf = append(e.buf, k...)
}

func metaIndex(k string) int {
	switch k {
	case "namespace":
		return metaNamespace
	case "name":
		return metaName
	case "uid":
		return metaUID
	case "resourceVersion":
		return metaResourceVersion
	}
	return -1
}

// jsonData converts x to JSON data through encoding/json, numbers as the
// unstructured decoder makes them (int64 or float64); what cannot be
// encoded becomes null.
func jsonData(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	var v any
	if utiljson.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// decode returns a new object with o's data. Its maps and slices are its
// own; its strings share o's memory (strings are immutable).
func (o *compactObject) decode() *unstructured.Unstructured {
	d := decoder{s: o.data}
	m, _ := d.value().(map[string]any)
	if d.err != nil {
		// Only a bug in encode could cause it: say where.
		panic(fmt.Sprintf("dynamicinformer: corrupt compact object %s/%s: %v", o.GetNamespace(), o.GetName(), d.err))
	}
	return &unstructured.Unstructured{Object: m}
}

type decoder struct {
	s   string
	off int
	err error
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); d.off < len(d.s) && shift < 64; shift += 7 {
		b := d.s[d.off]
		d.off++
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x
		}
	}
	d.fail()
	return 0
}

// count reads a length or count, which cannot exceed the bytes left.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.off) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("truncated at %d of %d bytes", d.off, len(d.s))
	}
	d.off = len(d.s)
}

func (d *decoder) str() string {
	n := d.count()
	s := d.s[d.off : d.off+n]
	d.off += n
	return s
}

// key reads a map key (see compactObject).
func (d *decoder) key() string {
	u := d.uvarint()
	if u&1 == 1 {
		if i := u >> 1; i < uint64(len(knownKeys)) {
			return knownKeys[i]
		}
		d.err = fmt.Errorf("unknown key %d at %d", u>>1, d.off)
		d.off = len(d.s)
		return ""
	}
	n := u >> 1
	if n > uint64(len(d.s)-d.off) {
		d.fail()
		return ""
	}
	s := d.s[d.off : d.off+int(n)]
	d.off += int(n)
	return s
}

func (d *decoder) value() any {
	if d.off >= len(d.s) {
		d.fail()
		return nil
	}
	tag := d.s[d.off]
	d.off++
	switch tag {
	case 'n':
		return nil
	case 't':
		return true
	case 'f':
		return false
	case 'i':
		u := d.uvarint()
		return int64(u>>1) ^ -int64(u&1)
	case 'd':
		if len(d.s)-d.off < 8 {
			d.fail()
			return nil
		}
		bits := binary.LittleEndian.Uint64([]byte(d.s[d.off : d.off+8]))
		d.off += 8
		return math.Float64frombits(bits)
	case 's':
		return d.str()
	case 'm':
		n := d.count()
		m := make(map[string]any, n)
		for range n {
			k := d.key()
			m[k] = d.value()
		}
		return m
	case 'l':
		n := d.count()
		l := make([]any, n)
		for i := range l {
			l[i] = d.value()
		}
		return l
	}
	d.err = fmt.Errorf("unknown tag %q at %d", tag, d.off-1)
	d.off = len(d.s)
	return nil
}
