package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// FlagSet is a flag.FlagSet that, like kubectl, accepts flags after
// positional arguments and short aliases (-n and --namespace).
type FlagSet struct {
	*flag.FlagSet
	usage, description string
	// Out is where --help prints the usage; os.Stdout unless set.
	Out io.Writer
}

// NewFlagSet returns the flag set of the command name; usage is its
// synopsis and description the text --help prints below it.
func NewFlagSet(name, usage, description string) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage, description: description, Out: os.Stdout}
	fs.SetOutput(io.Discard)
	return fs
}

// StringVarP registers a string flag under a long name and an optional short one.
func (fs *FlagSet) StringVarP(p *string, long, short, value, help string) {
	fs.StringVar(p, long, value, help)
	if short != "" {
		fs.StringVar(p, short, value, "short for --"+long)
	}
}

// BoolVarP registers a bool flag under a long name and an optional short one.
func (fs *FlagSet) BoolVarP(p *bool, long, short string, value bool, help string) {
	fs.BoolVar(p, long, value, help)
	if short != "" {
		fs.BoolVar(p, short, value, "short for --"+long)
	}
}

// ListVarP registers a repeatable flag that also splits on commas.
func (fs *FlagSet) ListVarP(p *[]string, long, short, help string) {
	v := (*listValue)(p)
	fs.Var(v, long, help)
	if short != "" {
		fs.Var(v, short, "short for --"+long)
	}
}

type listValue []string

func (l *listValue) String() string { return strings.Join(*l, ",") }
func (l *listValue) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// Parse parses flags anywhere among the arguments; the positional arguments
// are then fs.Args(). Everything after "--" is positional. --help prints
// the usage to Out and returns ErrHelp; a bad flag is a UsageError.
func (fs *FlagSet) Parse(args []string) error {
	var positional []string
	for {
		if err := fs.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.PrintUsage(fs.Out)
				return ErrHelp
			}
			return &UsageError{fmt.Sprintf("%s: %v (see `kreact %s --help`)", fs.Name(), err, fs.Name())}
		}
		rest := fs.FlagSet.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			positional = append(positional, rest[1:]...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Re-parse nothing: store positionals where Args() finds them.
	_ = fs.FlagSet.Parse(append([]string{"--"}, positional...))
	return nil
}

// PrintUsage prints the synopsis, the description and the flags, each
// short name beside its long one.
func (fs *FlagSet) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n\nFlags:\n", fs.usage, fs.description)
	shortOf := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, "short for --") {
			shortOf[strings.TrimPrefix(f.Usage, "short for --")] = f.Name
		}
	})
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, "short for --") {
			return
		}
		name := "    --" + f.Name
		if s, ok := shortOf[f.Name]; ok {
			name = "-" + s + ", --" + f.Name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %-36s %s%s\n", name, f.Usage, def)
	})
}
