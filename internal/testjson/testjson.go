// Package testjson makes random JSON data for tests that compare two ways
// of encoding or decoding it. It guarantees only that the data is JSON
// data as Go decodes it (maps, slices, strings, int64, float64, bool and
// nil), nested at most 4 deep, and the same for the same generator.
package testjson

import (
	"math"
	"math/rand/v2"
	"strings"
)

// Random returns random JSON data, nested at most 4 deep: strings with
// characters that JSON escapes and invalid UTF-8, integers, floats (NaN
// and infinities among them), booleans and nulls.
func Random(rng *rand.Rand) any {
	chars := []rune("aZ09 \"\\/<>&\n\t\x01\x7fé日\u2028😀")
	str := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteRune(chars[rng.IntN(len(chars))])
		}
		if rng.IntN(10) == 0 {
			b.WriteString("\xff")
		}
		return b.String()
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch n := rng.IntN(8); {
		case n == 0 && depth < 4:
			m := map[string]any{}
			for range rng.IntN(5) {
				m[str()] = value(depth + 1)
			}
			return m
		case n == 1 && depth < 4:
			s := make([]any, rng.IntN(5))
			for i := range s {
				s[i] = value(depth + 1)
			}
			return s
		case n == 2:
			return str()
		case n == 3:
			return rng.Int64() >> rng.IntN(64)
		case n == 4:
			return math.Float64frombits(rng.Uint64())
		case n == 5:
			return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(50)-25))
		case n == 6:
			return rng.IntN(2) == 0
		}
		return nil
	}
	return value(0)
}
