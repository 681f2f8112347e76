package editdistance

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var cases = []struct {
	a, b string
	want int
}{
	{"", "", 0},
	{"pods", "pods", 0},
	{"", "pods", 4},
	{"deploymnets", "deployments", 1},
	{"namespace", "namespaces", 1},
	{"onUpate", "onUpdate", 1},
	{"kitten", "sitting", 3},
	{"ünï", "uni", 2},
	{"ca", "abc", 3},
}

func TestDistance(t *testing.T) {
	for _, tt := range cases {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestAtMost(t *testing.T) {
	for _, tt := range cases {
		for limit := -1; limit <= tt.want+1; limit++ {
			want := min(tt.want, max(limit, 0)+1)
			if got := AtMost(tt.a, tt.b, limit); got != want {
				t.Errorf("AtMost(%q, %q, %d) = %d, want %d", tt.a, tt.b, limit, got, want)
			}
		}
	}
}

// TestAtMostAgreesWithDistance compares the cut-off computation with the
// whole one on random words over a small alphabet, where near misses and
// transpositions are frequent.
func TestAtMostAgreesWithDistance(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, rnd.IntN(9))
		for i := range b {
			b[i] = "abc"[rnd.IntN(3)]
		}
		return string(b)
	}
	for range 20_000 {
		a, b, limit := word(), word(), rnd.IntN(5)
		if got, want := AtMost(a, b, limit), min(Distance(a, b), limit+1); got != want {
			t.Fatalf("AtMost(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
		}
	}
}

// TestAtMostLongInput: a megabyte against a short name is decided by
// length; against a megabyte that differs at once, by the first rows. Both
// would take a quadratic Distance minutes.
func TestAtMostLongInput(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	if got := AtMost(long, "deployments", 3); got != 4 {
		t.Errorf("AtMost(1 MB, deployments, 3) = %d, want 4", got)
	}
	if got := AtMost(long, strings.Repeat("y", 1<<20), 3); got != 4 {
		t.Errorf("AtMost(1 MB, other 1 MB, 3) = %d, want 4", got)
	}
}
