package scripting

import (
	"math"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// RegexpMatchTimeout bounds one match of a regular expression that goja runs
// with regexp2 (patterns with look-around or back-references; the others run
// on Go's linear-time regexp). A match that times out counts as no match.
//
// goja offers no per-runtime setting for this: it compiles regexp2 patterns
// with regexp2.DefaultMatchTimeout, a package variable. The first Compile or
// NewRuntime sets that variable to RegexpMatchTimeout, once, unless the
// program already changed it from regexp2's "forever" default. This is the
// package's only process-wide effect.
const RegexpMatchTimeout = 100 * time.Millisecond

var regexpOnce sync.Once

// configureRegexp must run before goja compiles any pattern: regex literals
// are compiled by Compile, the others when a script runs.
func configureRegexp() {
	regexpOnce.Do(func() {
		if regexp2.DefaultMatchTimeout == time.Duration(math.MaxInt64) {
			regexp2.DefaultMatchTimeout = RegexpMatchTimeout
		}
	})
}
