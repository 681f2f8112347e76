package editdistance

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
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
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
