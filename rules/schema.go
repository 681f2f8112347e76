package rules

import (
	"bytes"
	_ "embed"
)

//go:embed schema/rule.schema.json
var schemaJSON []byte

// JSONSchema returns the JSON Schema (draft-07) of a rule document, for
// editors: yaml-language-server uses it to complete and check rule files.
// Parse is the authority; the schema describes the same fields but cannot
// express every check (selectors, field paths, durations' range). The
// caller owns the returned slice.
func JSONSchema() []byte { return bytes.Clone(schemaJSON) }
