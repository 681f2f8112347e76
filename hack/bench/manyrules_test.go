package main

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/rules"
)

// Every object is selected by exactly perWrite rules, all on its
// resource, and every rule selects some objects: the load's count of
// reactions per write is known.
func TestManyPlanSelectsEachObjectPerWriteTimes(t *testing.T) {
	for _, p := range []manyPlan{
		{rules: 50, objects: 999, perWrite: 3},
		{rules: 6, objects: 60, perWrite: 2},
		{rules: 7, objects: 100, perWrite: 1},
	} {
		selected := make([]int, p.rules)
		for r := range manyResources {
			for i := range p.objectsOf(r) {
				js := p.reactors(r, i, p.rules)
				if len(js) != p.perWrite {
					t.Fatalf("%+v: object %d of %s selected by %v, want %d rules", p, i, manyResources[r].name, js, p.perWrite)
				}
				for _, j := range js {
					if p.resourceOf(j) != r {
						t.Errorf("%+v: rule %d selects %s, but watches %s", p, j, manyResources[r].name, manyResources[p.resourceOf(j)].name)
					}
					selected[j]++
				}
			}
		}
		for j, n := range selected {
			if n == 0 {
				t.Errorf("%+v: rule %d selects no object", p, j)
			}
		}
		total := 0
		for r := range manyResources {
			total += p.objectsOf(r)
		}
		if total != p.objects {
			t.Errorf("%+v: %d objects in all, want %d", p, total, p.objects)
		}
	}
}

// With one rule active, the load writes only the objects it selects,
// each reacted to by it alone; with all, every object, by perWrite.
func TestManyPlanTargets(t *testing.T) {
	p := manyPlan{rules: 50, objects: 999, perWrite: 3}
	one := p.targets(1)
	if len(one) == 0 {
		t.Fatal("rule 0 has no targets")
	}
	for _, tg := range one {
		if tg.r != 0 || !slices.Equal(tg.reactors, []string{manyAnnotation(0)}) {
			t.Fatalf("target %+v of rule 0 alone", tg)
		}
		if !slices.Contains(p.groups(0), p.groupOf(0, tg.i)) {
			t.Fatalf("target %d is not in rule 0's groups %v", tg.i, p.groups(0))
		}
	}
	if all := p.targets(50); len(all) != 999 || len(all[0].reactors) != 3 {
		t.Errorf("all rules: %d targets, the first with %d reactors; want 999 and 3", len(all), len(all[0].reactors))
	}
}

// The generated rules are valid rule files, and differ in what they
// select, keep and write.
func TestManyRuleParses(t *testing.T) {
	p := manyPlan{rules: 50, objects: 999, perWrite: 3}
	for _, j := range []int{0, 1, 2, 49} {
		src := p.manyRule(j)
		rs, err := rules.Parse("r.yaml", []byte(src))
		if err != nil {
			t.Fatalf("rule %d: %v\n%s", j, err, src)
		}
		if len(rs) != 1 || rs[0].Name != manyRuleName(j) {
			t.Fatalf("rule %d: parsed %d rules", j, len(rs))
		}
		res := manyResources[p.resourceOf(j)]
		if got := rs[0].Watch[0].LabelSelector; got != p.bareSpec(j).Selector {
			t.Errorf("rule %d: labelSelector %q, want its bare controller's %q", j, got, p.bareSpec(j).Selector)
		}
		for _, want := range []string{"resource: " + res.name, manyAnnotation(j), res.top + ".seq", "ignoreChanges: [metadata.annotations]"} {
			if !strings.Contains(src, want) {
				t.Errorf("rule %d lacks %q:\n%s", j, want, src)
			}
		}
	}
	if p.manyRule(0) == p.manyRule(3) {
		t.Error("rules 0 and 3 are the same")
	}
	if got := p.bareSpec(4); got.Resource != 1 || got.Selector != "bench-group in (1,2,3)" || got.Annotation != "bench.kreact.dev/r4" {
		t.Errorf("bareSpec(4) = %+v", got)
	}
}

// A write is reacted to only when every rule that should react has
// mirrored it or a later value.
func TestManyTrackerWaitsForEveryReactor(t *testing.T) {
	tr := newTracker()
	now := time.Now()
	want := []string{"a", "b"}
	tr.wrote("cm/x", 5, want, now)
	tr.wrote("cm/x", 7, want, now)
	tr.saw("cm/x", map[string]int64{"a": 7}, now.Add(time.Millisecond))
	if tr.outstanding() != 2 {
		t.Fatalf("one reactor of two: %d outstanding, want 2", tr.outstanding())
	}
	tr.saw("cm/x", map[string]int64{"a": 7, "b": 5}, now.Add(2*time.Millisecond))
	if tr.outstanding() != 1 {
		t.Fatalf("both reached 5: %d outstanding, want 1", tr.outstanding())
	}
	tr.saw("cm/x", map[string]int64{"a": 8, "b": 9}, now.Add(3*time.Millisecond))
	if tr.outstanding() != 0 || len(tr.takeLatencies()) != 2 {
		t.Fatalf("both past 7: %d outstanding", tr.outstanding())
	}
	tr.wrote("cm/y", 9, want, now)
	tr.failed("cm/y", 9)
	if tr.outstanding() != 0 {
		t.Errorf("a failed write is still outstanding")
	}
}

func TestDecodeMirrored(t *testing.T) {
	if n, ok := decodeMirrored(base64.StdEncoding.EncodeToString([]byte("42")), true); !ok || n != 42 {
		t.Errorf("secret value: %d, %v", n, ok)
	}
	if n, ok := decodeMirrored("42", false); !ok || n != 42 {
		t.Errorf("plain value: %d, %v", n, ok)
	}
	if _, ok := decodeMirrored("x", false); ok {
		t.Error("decoded a value that is no number")
	}
}

func TestParseManyVariants(t *testing.T) {
	got, err := parseManyVariants("kreact-1, kreact-N,bare-N,bareprocs-50", 50)
	if err != nil || !slices.Equal(got, []string{"kreact-1", "kreact-50", "bare-50", "bareprocs-50"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"kreact-7", "other-N", "kreact-1,kreact-1", "kreact"} {
		if _, err := parseManyVariants(bad, 50); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The ratios pair the runs of one repeat, and the memory per rule is
// the difference over the rules beyond the first.
func TestManyReport(t *testing.T) {
	b := &manyBench{plan: manyPlan{rules: 50}, variants: []string{"kreact-1", "kreact-50", "bare-50"}}
	run := func(v string, rep int, cpu float64, patches int64, rss int64) manyRun {
		return manyRun{variant: v, repeat: rep, cpu: cpu, settleCPU: cpu / 100, patches: patches + 7, reactionsAsked: int(patches), hwm: 2 * rss, rss: rss, watches: 3}
	}
	var out bytes.Buffer
	manyReport(&out, b, []manyRun{
		run("kreact-1", 0, 1, 1000, 30<<20), run("kreact-50", 0, 1.5, 1000, 49<<20), run("bare-50", 0, 3, 1000, 98<<20),
		run("kreact-1", 1, 1, 1000, 30<<20), run("kreact-50", 1, 2, 1000, 79<<20), run("bare-50", 1, 2, 1000, 79<<20),
	})
	s := out.String()
	for _, want := range []string{
		"| kreact-50 / kreact-1 | **1.75× (1.50×–2.00×)** | 2.13× (1.63×–2.63×) | **2.13× (1.63×–2.63×)** | 2 |",
		"| kreact-50 / bare-50 | **0.75× (0.50×–1.00×)** |",
		"| kreact-50 | 1.750 (1.500–2.000) |",
		"| 0 (0–0) | 18 (15–20) | 2 |",
		"kreact: memory per rule beyond the first, steady 711 KiB (397 KiB–1024 KiB)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}
