package scripting

import (
	"testing"
	"time"
)

// A Runtime whose call was demoted runs the next call on a new goroutine
// (the demoted thread ended with the old one), and both calls work.
func TestRuntimeRetiresDemotedWorker(t *testing.T) {
	src := `let n = 0;
function onAdd(obj) {
  if (obj.metadata.name === "long") {
    for (let i = 0; i < 1e6; i++) n++;
  }
  kreact.patch(obj, {metadata: {labels: {seen: "yes"}}});
}
`
	host := newFakeHost()
	r := mustRuntime(t, "rules/long.js", src, host, RuntimeOptions{Rule: "long", Timeout: 30 * time.Second, MemoryLimit: 4 << 30})
	defer r.Close()
	long := addEvent
	long.Object = long.Object.DeepCopy()
	long.Object.SetName("long")
	if _, err := r.Call(long); err != nil {
		t.Fatalf("long call: %v", err)
	}
	if !r.env.retired {
		t.Fatal("a call that counted to a million was not demoted")
	}
	if acts, err := r.Call(addEvent); err != nil || len(acts) != 1 {
		t.Fatalf("next call = %v, %v; want one patch", acts, err)
	}
	if r.env.retired {
		t.Error("a short call was demoted")
	}
}
