package qualified

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxName is the length of a qualified name's name part.
const MaxName = 63

// Name returns s if it fits in MaxName characters, and otherwise its
// first 54 characters, "-" and 8 hexadecimal digits of its SHA-256. s must
// start with a letter or digit (a rule's name does), so the result starts
// and ends with one.
func Name(s string) string {
	if len(s) <= MaxName {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:MaxName-9] + "-" + hex.EncodeToString(sum[:4])
}
