package dynamicinformer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/apiresource"
)

// RESTClient returns a REST client for Options.REST: of cfg's cluster, it
// decodes lists and watch events of JSON straight into the compact objects
// an informer caches (see transcoder), and Status objects, for errors, as
// usual. It shares the connections and the rate limit of share, unless
// share is nil.
func RESTClient(cfg *rest.Config, share *rest.RESTClient) (*rest.RESTClient, error) {
	config := dynamic.ConfigFor(cfg)
	// An unversioned client has no base path: requests give absolute ones.
	config.GroupVersion = nil
	config.APIPath = "/"
	config.NegotiatedSerializer = compactSerializer{}
	// JSON only: ConfigFor asks for CBOR too when client-go's CBOR
	// feature gates are on, which this codec does not read.
	config.ContentType, config.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	if share == nil {
		return rest.UnversionedRESTClientFor(config)
	}
	config.RateLimiter = share.GetRateLimiter()
	return rest.UnversionedRESTClientForConfigAndClient(config, share.Client)
}

// compactSerializer is the NegotiatedSerializer of RESTClient's clients.
// It encodes nothing an informer would send.
type compactSerializer struct{}

func (compactSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       compactCodec{},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    compactCodec{},
			Framer:        jsonFramer{},
		},
	}}
}

func (compactSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (compactSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// compactCodec decodes, by the type asked for:
//   - a list into a *compactList;
//   - a watch event into a *metav1.WatchEvent whose Object.Raw is the
//     object's JSON, in data;
//   - an object (nothing asked for) into a *compactObject, or a
//     *metav1.Status if it is one;
//   - a *metav1.Status.
type compactCodec struct{}

func (compactCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var err error
	switch into := into.(type) {
	case nil:
		var t transcoder
		o, err := t.object(data)
		if err != nil {
			return nil, nil, err
		}
		if string(t.kind) == "Status" {
			status := &metav1.Status{}
			if err := json.Unmarshal(data, status); err != nil {
				return nil, nil, err
			}
			return status, nil, nil
		}
		return &o, nil, nil
	case *compactList:
		err = decodeList(data, into)
	case *metav1.WatchEvent:
		err = decodeEvent(data, into)
	case *metav1.Status:
		err = json.Unmarshal(data, into)
	default:
		err = fmt.Errorf("dynamicinformer: cannot decode into %T", into)
	}
	if err != nil {
		return nil, nil, err
	}
	return into, nil, nil
}

func (compactCodec) Encode(obj runtime.Object, w io.Writer) error {
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}

func (compactCodec) Identifier() runtime.Identifier { return "dynamicinformer-compact" }

// decodeEvent reads a watch event's type and the bounds of its object.
func decodeEvent(data []byte, ev *metav1.WatchEvent) error {
	*ev = metav1.WatchEvent{}
	t := &transcoder{data: data}
	return t.members(func(key []byte) error {
		switch string(key) {
		case "type":
			s, err := t.str()
			ev.Type = string(s)
			return err
		case "object":
			t.ws()
			start := t.off
			if err := t.skip(); err != nil {
				return err
			}
			ev.Object.Raw = t.data[start:t.off]
			return nil
		}
		return t.skip()
	})
}

// errEnough stops reading a list's kind once it is known.
var errEnough = errors.New("enough")

// compactList is a list as an informer's ListWatch receives it: the
// list's metadata, and its items in the compact form.
type compactList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []compactObject
}

// DeepCopyObject copies the list, not its items, which cannot change.
func (l *compactList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = slices.Clone(l.Items)
	return &c
}

// decodeList reads a list: its kind and apiVersion first, which items
// that have neither take (the kind without "List", as the unstructured
// decoder does), then its metadata and items.
func decodeList(data []byte, list *compactList) error {
	*list = compactList{}
	t := &transcoder{data: data}
	err := t.members(func(key []byte) error {
		switch string(key) {
		case "kind", "apiVersion":
			if t.next() == '"' {
				field := &list.Kind
				if key[0] == 'a' {
					field = &list.APIVersion
				}
				s, err := t.str()
				*field = string(s)
				if err == nil && list.Kind != "" && list.APIVersion != "" {
					// The API server sends them first: the rest of
					// the list need not be looked through twice.
					return errEnough
				}
				return err
			}
		}
		return t.skip()
	})
	if err != nil && err != errEnough {
		return err
	}
	if list.Kind == "" {
		return fmt.Errorf("list has no kind: %.100s", data)
	}
	items := transcoder{item: true, defaultKind: strings.TrimSuffix(list.Kind, "List"), defaultAPIVersion: list.APIVersion}
	t = &transcoder{data: data}
	return t.members(func(key []byte) error {
		switch string(key) {
		case "metadata":
			if t.next() == '{' {
				return decodeListMeta(t, &list.ListMeta)
			}
		case "items":
			if t.next() == '[' {
				return decodeItems(t, &items, list)
			}
		}
		return t.skip()
	})
}

// decodeListMeta reads the list metadata that a ListWatch uses, at t.off.
func decodeListMeta(t *transcoder, meta *metav1.ListMeta) error {
	return t.members(func(key []byte) error {
		switch string(key) {
		case "resourceVersion", "continue":
			if t.next() == '"' {
				field := &meta.ResourceVersion
				if key[0] == 'c' {
					field = &meta.Continue
				}
				s, err := t.str()
				*field = string(s)
				return err
			}
		}
		return t.skip()
	})
}

// decodeItems transcodes the items at t.off with items.
func decodeItems(t *transcoder, items *transcoder, list *compactList) error {
	return t.elements(func() error {
		t.ws()
		start := t.off
		if err := t.skip(); err != nil {
			return err
		}
		o, err := items.object(t.data[start:t.off])
		if err != nil {
			return fmt.Errorf("item %d: %w", len(list.Items), err)
		}
		list.Items = append(list.Items, o)
		return nil
	})
}

// jsonFramer splits a watch stream into its events: JSON objects, one
// after another.
type jsonFramer struct{}

func (jsonFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &frameReader{r: r, buf: make([]byte, 0, 32<<10)}
}

func (jsonFramer) NewFrameWriter(w io.Writer) io.Writer { return w }

// frameReader's Read returns one JSON object of the stream at a time (as
// client-go's JSON framer does, with io.ErrShortBuffer while it does not
// fit): it finds each one's end by its brackets and quotes.
type frameReader struct {
	r   io.ReadCloser
	buf []byte
	// buf[start:] is what has been read and not returned; buf[start:end]
	// is the frame being returned, once end > start.
	start, end int
	// scanned is how far the frame's end was looked for, with the state
	// there.
	scanned  int
	depth    int
	inString bool
	escaped  bool
	err      error
}

// maxFrame is the largest event read: the API server's limit on an
// object's size is a few MiB.
const maxFrame = 64 << 20

func (f *frameReader) Read(p []byte) (int, error) {
	if f.end <= f.start {
		if err := f.frame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.buf[f.start:f.end])
	f.start += n
	if f.start < f.end {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// frame reads until buf[start:end] holds the next JSON object.
func (f *frameReader) frame() error {
	// What follows the last frame moves to the front.
	f.buf = f.buf[:copy(f.buf, f.buf[f.start:])]
	f.start, f.end, f.scanned = 0, 0, 0
	f.depth, f.inString, f.escaped = 0, false, false
	for {
		if f.scan() {
			return nil
		}
		if f.err != nil {
			if f.err == io.EOF && f.depth > 0 {
				return io.ErrUnexpectedEOF
			}
			return f.err
		}
		if len(f.buf) == cap(f.buf) {
			if len(f.buf) >= maxFrame {
				return fmt.Errorf("watch event over %d bytes", maxFrame)
			}
			f.buf = slices.Grow(f.buf, len(f.buf))
		}
		n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err != nil && n == 0 {
			f.err = err
		}
	}
}

// scan goes on looking for the end of the frame in buf, and reports
// whether it found it (and set start and end).
func (f *frameReader) scan() bool {
	for i := f.scanned; i < len(f.buf); i++ {
		c := f.buf[i]
		switch {
		case f.inString:
			switch {
			case f.escaped:
				f.escaped = false
			case c == '\\':
				f.escaped = true
			case c == '"':
				f.inString = false
			}
		case c == '"':
			f.inString = true
		case c == '{' || c == '[':
			if f.depth == 0 {
				f.start = i
			}
			f.depth++
		case c == '}' || c == ']':
			f.depth--
			if f.depth == 0 {
				f.end = i + 1
				f.scanned = f.end
				return true
			}
		}
	}
	f.scanned = len(f.buf)
	return false
}

func (f *frameReader) Close() error { return f.r.Close() }

// restResource lists and watches one resource with a REST client made by
// RESTClient: the resume.Resource of an informer that has one.
type restResource struct {
	client    rest.Interface
	gvr       schema.GroupVersionResource
	namespace string
}

func (r restResource) List(ctx context.Context, opts metav1.ListOptions) (*compactList, error) {
	list := &compactList{}
	err := r.client.Get().AbsPath(apiresource.Path(r.gvr, r.namespace, "", "")...).SpecificallyVersionedParams(&opts, parameterCodec, versionV1).
		Do(ctx).Into(list)
	return list, err
}

func (r restResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.client.Get().AbsPath(apiresource.Path(r.gvr, r.namespace, "", "")...).SpecificallyVersionedParams(&opts, parameterCodec, versionV1).
		Watch(ctx)
}

// The parameters of lists and watches are encoded as the dynamic client
// encodes them.
var (
	parameterScheme = runtime.NewScheme()
	parameterCodec  = runtime.NewParameterCodec(parameterScheme)
	versionV1       = schema.GroupVersion{Version: "v1"}
)

func init() { metav1.AddToGroupVersion(parameterScheme, versionV1) }
