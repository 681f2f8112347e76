package isolation

import "testing"

// The environment that Command sets makes the child's role: the replica
// it is part of, and its report descriptor.
func TestRoleOf(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	if r, err := RoleOf(env(map[string]string{ReplicaEnv: "web-0"})); err != nil || r.Child || r.Replica != "" {
		t.Errorf("without %s: %+v, %v; want kreact run's own role", ChildEnv, r, err)
	}
	r, err := RoleOf(env(map[string]string{ChildEnv: "1", ReplicaEnv: "web-0"}))
	if err != nil || !r.Child || r.Replica != "web-0" || r.Reporter != nil {
		t.Errorf("child: %+v, %v; want the child of web-0, reporting nothing", r, err)
	}
	if _, err := RoleOf(env(map[string]string{ChildEnv: "1", ReportFDEnv: "x"})); err == nil {
		t.Error("a report descriptor that is not one: no error")
	}
	loaded := 0
	r.Loaded(func(n int) { loaded = n })(3)
	if loaded != 3 {
		t.Errorf("Loaded told %d, want 3", loaded)
	}
}
