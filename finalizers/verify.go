package finalizers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Returned is a released object that carries the rule's finalizer again.
type Returned struct {
	Target Target
	Object *unstructured.Unstructured
}

// WaitBack lists the released objects (by UID) of the targets every half
// second for wait, and returns those that carry rule's finalizer again as
// soon as some do: a kreact that still runs the rule puts it back within
// moments of its removal. It returns none once wait has passed, and
// ctx's error if ctx ends first.
func WaitBack(ctx context.Context, client dynamic.Interface, rule string, targets []Target, released map[types.UID]bool, wait time.Duration) ([]Returned, error) {
	deadline := time.Now().Add(wait)
	for {
		interval := min(500*time.Millisecond, time.Until(deadline))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
		var back []Returned
		for _, t := range targets {
			objs, err := Back(ctx, client, rule, []Target{t}, released)
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				back = append(back, Returned{t, o})
			}
		}
		if len(back) > 0 || !time.Now().Before(deadline) {
			return back, nil
		}
	}
}

// NotCarried is the error of `kreact finalizers release` when no object
// of the targets (names and where say which, for the message) carried
// rule's finalizer: the rule is unknown, or watches other resources. It
// names the kreact finalizers the objects do carry (Carried), if any.
func NotCarried(ctx context.Context, client dynamic.Interface, rule string, targets []Target, names, where string) error {
	err := fmt.Errorf("finalizers release: no object of %s %s carries %s: rule %s is unknown, does not watch them, or was released already",
		names, where, Name(rule), rule)
	carried, _ := Carried(ctx, client, targets)
	if len(carried) == 0 {
		return err
	}
	var list []string
	for _, name := range slices.Sorted(maps.Keys(carried)) {
		list = append(list, fmt.Sprintf("%s (%s)", name, Objects(carried[name])))
	}
	return fmt.Errorf("%w; kreact finalizers there: %s", err, strings.Join(list, ", "))
}

// Objects counts n objects in words: "1 object", "2 objects".
func Objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
