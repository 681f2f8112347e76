package delivery

import (
	"slices"
	"testing"
)

// The ring keeps first-in first-out order across wrap-arounds, growth
// and shrinking, and its array holds nothing it has handed out.
func TestFifo(t *testing.T) {
	var q fifo[int]
	var want []int
	next := 0
	check := func(step string) {
		t.Helper()
		if q.Len() != len(want) {
			t.Fatalf("%s: Len %d, want %d", step, q.Len(), len(want))
		}
		var held []int
		for i := range len(q.items) {
			if v := q.items[i]; v != 0 {
				held = append(held, v)
			}
		}
		slices.Sort(held)
		sorted := slices.Sorted(slices.Values(want))
		if !slices.Equal(held, sorted) {
			t.Fatalf("%s: the array holds %v, want only %v", step, held, sorted)
		}
	}
	push := func(n int) {
		for range n {
			next++
			q.Push(next)
			want = append(want, next)
		}
	}
	pop := func(n int) {
		for range n {
			got := q.Pop()
			if got != want[0] {
				t.Fatalf("Pop = %d, want %d", got, want[0])
			}
			want = want[1:]
		}
	}
	for _, step := range []struct {
		name      string
		push, pop int
	}{
		{"one at a time", 1, 1},
		{"wrap around", 10, 5},
		{"wrap around again", 10, 12},
		{"grow while wrapped", 100, 0},
		{"a burst", 5000, 4000},
		{"drain", 0, 1103},
		{"after the burst", 3, 2},
	} {
		push(step.push)
		check(step.name + " (pushed)")
		pop(step.pop)
		check(step.name)
	}
	if len(q.items) > 4*minFifo {
		t.Errorf("after the burst, the array has %d slots for %d items", len(q.items), q.Len())
	}
	pop(q.Len())
	check("empty")
}
