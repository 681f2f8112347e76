package scripting

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// The kreact API for logs: kreact.log, warn and error, and console.

// installLog installs kreact.log, warn and error, and the console
// functions.
func (e *env) installLog(kreact, console calls) {
	kreact.add("log", e.logf("log", slog.LevelInfo))
	kreact.add("warn", e.logf("warn", slog.LevelWarn))
	kreact.add("error", e.logf("error", slog.LevelError))
	console.add("log", e.console(slog.LevelInfo))
	console.add("info", e.console(slog.LevelInfo))
	console.add("debug", e.console(slog.LevelDebug))
	console.add("warn", e.console(slog.LevelWarn))
	console.add("error", e.console(slog.LevelError))
}

// kreact.log(msg, fields?), kreact.warn, kreact.error.
func (e *env) logf(op string, level slog.Level) native {
	return func(call goja.FunctionCall) goja.Value {
		e.enter(op)
		msg := e.format(call.Argument(0))
		attrs := []slog.Attr{slog.String("rule", e.cfg.opts.Rule), slog.String("origin", e.origin().String())}
		if f, ok := call.Argument(1).(*goja.Object); ok {
			fields := e.logFields(op, f)
			keys := make([]string, 0, len(fields))
			for k := range fields {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				key := k
				if k == "rule" || k == "origin" {
					// Each attribute once: the record has these already.
					key = "field." + k
				}
				attrs = append(attrs, slog.Any(key, fields[k]))
			}
		}
		e.log(level, msg, attrs)
		return goja.Undefined()
	}
}

// logFields converts the fields of kreact.log and friends. A field that
// is undefined (most often a property misspelt, obj.metadata.nme) is logged
// as "undefined": the call goes on, where throwing would fail it and drop
// its actions over what it only logs. Other values are JSON data, as
// everywhere else.
func (e *env) logFields(op string, f *goja.Object) map[string]any {
	if f.ClassName() != "Object" {
		e.throwType("%s: fields must be an object", op)
	}
	undefined := map[string]bool{}
	if f.ExportType() == plainObjectType {
		for _, k := range f.Keys() {
			if goja.IsUndefined(f.Get(k)) {
				undefined[k] = true
			}
		}
	}
	if len(undefined) > 0 {
		// A copy without them, so that the script's object is not
		// changed (it may be frozen).
		c := e.vm.NewObject()
		for _, k := range f.Keys() {
			if !undefined[k] {
				_ = c.Set(k, f.Get(k))
			}
		}
		f = c
	}
	fields, ok := e.json(op, f, "fields").(map[string]any)
	if !ok {
		e.throwType("%s: fields must be an object", op)
	}
	for k := range undefined {
		fields[k] = "undefined"
	}
	return fields
}

// console.log(...args) and friends.
func (e *env) console(level slog.Level) native {
	return func(call goja.FunctionCall) goja.Value {
		e.enter("console")
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = e.format(a)
		}
		e.log(level, strings.Join(parts, " "),
			[]slog.Attr{slog.String("rule", e.cfg.opts.Rule), slog.String("origin", e.origin().String())})
		return goja.Undefined()
	}
}

// log writes a record, at most maxLogsPerCall per call.
func (e *env) log(level slog.Level, msg string, attrs []slog.Attr) {
	e.logs++
	switch {
	case e.logs == maxLogsPerCall+1:
		e.cfg.host.Log(slog.LevelWarn, fmt.Sprintf("more than %d log records in one call; dropping the rest", maxLogsPerCall), attrs[:2]...)
		return
	case e.logs > maxLogsPerCall:
		return
	}
	if len(msg) > maxLogSize {
		cut := maxLogSize
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	e.cfg.host.Log(level, msg, attrs...)
}

// format renders a value for a log message: strings as they are, data as
// JSON, anything else as the script would print it.
func (e *env) format(v goja.Value) string {
	switch {
	case goja.IsString(v):
		return v.String()
	case !isObject(v):
		return e.safeString(v)
	}
	if _, ok := goja.AssertFunction(v); ok {
		return e.safeString(v)
	}
	x, err := e.toJSON(v, "value")
	if err != nil {
		return e.safeString(v)
	}
	b, err := canonicalJSON(x)
	if err != nil {
		return e.safeString(v)
	}
	return string(b)
}
