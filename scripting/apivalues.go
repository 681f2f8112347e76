package scripting

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/dop251/goja"
)

// The kreact API for values: kreact.clone (a plain, writable copy of a
// read-only view) and kreact.hash (a digest of a value's canonical JSON).

// installValues installs kreact.clone and kreact.hash.
func (e *env) installValues(kreact calls) {
	kreact.add("clone", e.clone)
	kreact.add("hash", e.hash)
}

// kreact.clone(value): a plain, writable deep copy.
func (e *env) clone(call goja.FunctionCall) goja.Value {
	e.enter("clone")
	v := call.Argument(0)
	o, ok := v.(*goja.Object)
	if !ok {
		return v
	}
	switch o.ExportType() {
	case objectViewType:
		return e.fromJSON(o.Export().(*objectView).m)
	case arrayViewType:
		return e.fromJSON(o.Export().(*arrayView).s)
	}
	return e.fromJSON(e.json("clone", v, "value"))
}

// canonicalJSON encodes JSON data with sorted keys and without HTML
// escaping.
func canonicalJSON(x any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// kreact.hash(value): hex SHA-256 of the value's canonical JSON.
func (e *env) hash(call goja.FunctionCall) goja.Value {
	e.enter("hash")
	data, err := canonicalJSON(e.json("hash", call.Argument(0), "value"))
	if err != nil {
		e.throwType("hash: %v", err)
	}
	sum := sha256.Sum256(data)
	return e.vm.ToValue(hex.EncodeToString(sum[:]))
}
