package ruletest

import (
	"bytes"
	_ "embed"
)

//go:embed schema/ruletest.schema.json
var schemaJSON []byte

// JSONSchema returns the JSON Schema (draft-07) of a test file, for
// editors. LoadFile is the authority; the schema cannot express every check
// (resource names, fixture files, tick targets). The caller owns the
// returned slice.
func JSONSchema() []byte { return bytes.Clone(schemaJSON) }
