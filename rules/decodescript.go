package rules

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/yamlnode"
)

// The decoding of a rule's script: inline or from a file, its language,
// and where its first character is.

// script fills Script, ScriptFile and ScriptPos from exactly one of
// spec.script and spec.scriptFile.
func (d *decoder) script(r *Rule, spec, inline, file yamlnode.Entry) {
	switch {
	case inline.Present() && file.Present():
		d.Errorf(file.Key, "spec.scriptFile: script (at %s) and scriptFile are mutually exclusive; keep one", d.Pos(inline.Key).LineCol())
		return
	case !inline.Present() && !file.Present():
		d.Errorf(spec.Key, "missing required field \"spec.script\" or \"spec.scriptFile\"")
		return
	case inline.Present():
		s, ok := d.Str(inline.Value, "spec.script")
		if !ok {
			return
		}
		if strings.TrimSpace(s) == "" {
			d.Errorf(inline.Value, "spec.script: the script is empty")
			return
		}
		r.Script = s
		r.ScriptPos = d.inlineScriptPos(yamlnode.Deref(inline.Value))
	case d.fromObject:
		d.Errorf(file.Key, "spec.scriptFile: a rule object carries its script in spec.script (scriptFile names a file beside a rule file)")
	default:
		name, ok := d.nonEmpty(file.Value, "spec.scriptFile")
		if !ok {
			return
		}
		data, path, err := readScriptFile(d.File, name)
		if err != nil {
			d.Errorf(file.Value, "spec.scriptFile: %v", err)
			return
		}
		if strings.TrimSpace(data) == "" {
			d.Errorf(file.Value, "spec.scriptFile: script file %s is empty", path)
			return
		}
		r.Script = data
		r.ScriptFile = name
		r.ScriptPos = diag.Position{File: path, Line: 1, Col: 1}
	}
}

// scriptLang decodes spec.scriptLang. Left out, a scriptFile ending in .ts
// is TypeScript and anything else JavaScript.
func (d *decoder) scriptLang(r *Rule, e yamlnode.Entry) {
	r.ScriptLang = ScriptJavaScript
	if strings.HasSuffix(r.ScriptFile, ".ts") {
		r.ScriptLang = ScriptTypeScript
	}
	if !e.Present() || yamlnode.IsNull(yamlnode.Deref(e.Value)) {
		return
	}
	s, ok := d.Str(e.Value, "spec.scriptLang")
	if !ok {
		return
	}
	switch l := ScriptLang(s); l {
	case ScriptJavaScript, ScriptTypeScript:
		r.ScriptLang = l
	default:
		d.Errorf(e.Value, "spec.scriptLang: unknown language %q (want js or ts)", s)
		r.ScriptLang = "" // unknown: LoadAll does not check the script
	}
}

// inlineScriptPos returns where the first character of the script value n
// is in the YAML file.
func (d *decoder) inlineScriptPos(n *yaml.Node) diag.Position {
	p := d.Pos(n)
	switch n.Style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		p.Col++
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// n is at the | or > header; the content starts on the next line,
		// indented by the indentation of its first non-blank line, or by
		// the explicit indentation indicator (|2) plus that of the header's
		// line.
		p.Line++
		header := d.line(n.Line)
		if n.Column-1 < len(header) {
			header = header[n.Column-1:]
		}
		if i := strings.IndexAny(header, "123456789"); i >= 0 && i < 3 {
			p.Col = leadingSpaces(d.line(n.Line)) + int(header[i]-'0') + 1
			break
		}
		p.Col = 1
		for l := p.Line; l <= len(d.lines); l++ {
			if s := d.line(l); strings.TrimSpace(s) != "" {
				p.Col = leadingSpaces(s) + 1
				break
			}
		}
	}
	return p
}

func (d *decoder) line(n int) string {
	if n < 1 || n > len(d.lines) {
		return ""
	}
	return d.lines[n-1]
}

func leadingSpaces(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}
