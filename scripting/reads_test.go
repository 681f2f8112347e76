package scripting

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestReadPaths(t *testing.T) {
	for _, c := range []struct {
		name, src string
		ts        bool
		want      []string // "handler param.path@needle"
	}{{
		name: "member chains rooted at the object parameters",
		src: `function onUpdate(oldObj, newObj, ctx) {
  if (newObj.spec.template.spec.containers.length > oldObj["spec"].replicas) {
    kreact.log(ctx.rule + newObj.status?.phase);
  }
}`,
		want: []string{
			"onUpdate newObj.spec.template.spec.containers.length@newObj.spec.template",
			"onUpdate oldObj.spec.replicas@oldObj[",
			"onUpdate newObj.status.phase@newObj.status",
		},
	}, {
		name: "a computed key ends the path; calls on a value read it",
		src: `const onAdd = (obj, ctx) => {
  const k = "x";
  obj.metadata.labels[k];
  obj[k];
  obj.spec.replicas.toString();
};
var onDelete = function (o) { return o.status.phase; };
function onTimer(obj) { kreact.log(obj.data.color); }
function onTick(ctx) { kreact.log(ctx.rule.length); }
function helper(obj) { return obj.spec.x; }`,
		want: []string{
			"onAdd obj.metadata.labels@obj.metadata.labels",
			"onAdd obj.spec.replicas.toString@obj.spec.replicas",
			"onDelete o.status.phase@o.status",
			"onTimer obj.data.color@obj.data",
		},
	}, {
		name: "a parameter bound again is not followed",
		src: `function onAdd(obj, ctx) {
  for (const p of kreact.list("pods")) { kreact.log(p.spec.nodeName); }
  kreact.list("pods").filter(obj => obj.status.phase);
}
function onUpdate(oldObj, newObj) {
  newObj = kreact.get("deployments", "a", "b");
  kreact.log(newObj.spec.x, oldObj.spec.y);
}`,
		want: []string{"onUpdate oldObj.spec.y@oldObj.spec.y"},
	}, {
		name: "TypeScript, positions in the source",
		ts:   true,
		src: `export function onAdd(obj: any, ctx: any): void {
  const n: number = obj.spec.replicas;
  kreact.log(String(n));
}`,
		want: []string{"onAdd obj.spec.replicas@obj.spec"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile("r.js", c.src, CompileOptions{TypeScript: c.ts})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.ReadPaths() {
				got = append(got, fmt.Sprintf("%s %s.%s@%s", r.Handler, r.Param, r.Path, r.Pos))
			}
			var want []string
			for _, w := range c.want {
				read, needle, _ := strings.Cut(w, "@")
				want = append(want, read+"@"+position("r.js", c.src, needle))
			}
			if !slices.Equal(got, want) {
				t.Errorf("ReadPaths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
