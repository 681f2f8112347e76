package scripting

import (
	"testing"

	"github.com/kreact/kreact/event"
)

// tsc checks a rule file as a module of its own only if it exports
// something, so handlers may be exported; kreact ignores the export, in
// JavaScript and TypeScript alike.
func TestExportedDeclarations(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		ts     bool
		origin string // of the patch onAdd queues
	}{
		{
			name:   "exported function",
			src:    "export function onAdd(obj, ctx) {\n  kreact.patch(obj, {spec: {replicas: 3}});\n}\n",
			origin: "rule:2:15",
		},
		{
			name:   "exported const, in TypeScript",
			src:    "type T = KubeObject;\nexport const onAdd = (obj: T, ctx: Ctx): void => {\n  kreact.patch(obj, {spec: {replicas: 3}});\n};\n",
			ts:     true,
			origin: "rule:3:10",
		},
		{
			name:   "exported function, in TypeScript",
			src:    "export function onAdd(obj: KubeObject, ctx: Ctx): void {\n  kreact.patch(obj, {spec: {replicas: 3}});\n}\nexport interface X { a: number }\n",
			ts:     true,
			origin: "rule:2:10",
		},
		{
			name:   "export on a line of its own, async, beside other exports",
			src:    "export\n  async function onAdd(obj) {\n  kreact.patch(obj, {spec: {replicas: x}});\n}\nexport let x = 3; export class C {}\nexport var v;\n",
			origin: "rule:3:15",
		},
		{
			// The template's text looks like an export; it is not one,
			// and stays as written.
			name:   "export in a template literal",
			src:    "export const s = `\nexport function f() {}`;\nexport function onAdd(obj) {\n  if (s !== \"\\nexport function f() {}\") throw new Error(s);\n  kreact.patch(obj, {spec: {replicas: 3}});\n}\n",
			origin: "rule:5:15",
		},
		{
			name:   "export in a template literal, in TypeScript",
			src:    "export const s: string = `\nexport function f() {}`;\nexport function onAdd(obj: KubeObject) {\n  if (s !== \"\\nexport function f() {}\") throw new Error(s);\n  kreact.patch(obj, {spec: {replicas: 3}});\n}\n",
			ts:     true,
			origin: "rule:5:10",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile("rule", tt.src, CompileOptions{TypeScript: tt.ts})
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if !p.HasHandler(event.Add) {
				t.Fatal("onAdd not found")
			}
			got, err := mustRuntimeProgram(t, p, newFakeHost(), RuntimeOptions{}).Call(addEvent)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if len(got) != 1 || got[0].Origin.String() != tt.origin {
				t.Errorf("actions = %+v, want one patch from %s", got, tt.origin)
			}
		})
	}
}

// What a module may do beyond exporting declarations fails, at its
// position, saying why.
func TestModuleSyntaxErrors(t *testing.T) {
	const (
		notExport = "a rule script is not a module: export is only allowed before a top-level function, class, const, let or var (no export lists, export default or export from)"
		notImport = "a rule script is not a module and cannot import: everything outside it is reached through kreact"
	)
	tests := []struct {
		name string
		src  string
		ts   bool
		want string
	}{
		{"export list", "function f() {}\nexport { f as onAdd };\n", false, "rule:2:1: " + notExport},
		{"export default", "export function onAdd() {}\nexport default function onUpdate() {}\n", false, "rule:2:1: " + notExport},
		{"import", "import { x } from \"y\";\nexport function onAdd() { x(); }\n", false, "rule:1:1: " + notImport},
		{"nested export", "if (true) {\n  export function onAdd() {}\n}\n", false, "rule:2:3: " + notExport},
		{"export list, in TypeScript", "function f(): void {}\nexport { f as onAdd };\n", true, "rule:2:1: " + notExport},
		{"import, in TypeScript", "import { x } from \"y\";\nexport function onAdd(): void { x(); }\n", true, "rule:1:1: " + notImport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("rule", tt.src, CompileOptions{TypeScript: tt.ts})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Compile = %v, want %s", err, tt.want)
			}
		})
	}
}
