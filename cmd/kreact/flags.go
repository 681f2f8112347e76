package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/internal/kubeconfig"
)

// errHelp is returned when --help was asked for; the usage is printed.
var errHelp = errors.New("help requested")

// flagSet is a flag.FlagSet that, like kubectl, accepts flags after
// positional arguments and short aliases (-n and --namespace).
type flagSet struct {
	*flag.FlagSet
	usage, description string
	out                io.Writer
}

func newFlagSet(name, usage, description string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage, description: description, out: os.Stdout}
	fs.SetOutput(io.Discard)
	return fs
}

// stringVar registers a string flag under a long name and an optional short one.
func (fs *flagSet) stringVar(p *string, long, short, value, help string) {
	fs.StringVar(p, long, value, help)
	if short != "" {
		fs.StringVar(p, short, value, "short for --"+long)
	}
}

func (fs *flagSet) boolVar(p *bool, long, short string, value bool, help string) {
	fs.BoolVar(p, long, value, help)
	if short != "" {
		fs.BoolVar(p, short, value, "short for --"+long)
	}
}

// listVar registers a repeatable flag that also splits on commas.
func (fs *flagSet) listVar(p *[]string, long, short, help string) {
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

// parse parses flags anywhere among the arguments; the positional arguments
// are then fs.Args().
func (fs *flagSet) parse(args []string) error {
	var positional []string
	for {
		if err := fs.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.printUsage(fs.out)
				return errHelp
			}
			return &usageError{fmt.Sprintf("%s: %v (see `kreact %s --help`)", fs.Name(), err, fs.Name())}
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

func (fs *flagSet) printUsage(w io.Writer) {
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
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %-36s %s%s\n", name, f.Usage, def)
	})
}

// clusterFlags are the connection flags shared with kubectl, and the
// client-side rate limits of kube-controller-manager and friends.
type clusterFlags struct {
	kubeconfig, context string
	qps                 float64
	burst               int

	// source is where the last load found the configuration: a
	// kubeconfig file or kubeconfig.InCluster.
	source string
}

// The default client limits. client-go's own (5 and 10) starve a reaction
// engine under a burst of changes: at 200 writes/s a rule's patches would
// wait on the client, not on its own rateLimit.
const (
	defaultQPS   = 100
	defaultBurst = 200
)

func (c *clusterFlags) register(fs *flagSet) {
	fs.stringVar(&c.kubeconfig, "kubeconfig", "", "", "path to the kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	fs.stringVar(&c.context, "context", "", "", "kubeconfig context to use")
	fs.Float64Var(&c.qps, "kube-api-qps", defaultQPS, "requests per second kreact sends to the API server, all rules together (-1: no client-side limit; the server's priority and fairness still applies)")
	fs.IntVar(&c.burst, "kube-api-burst", defaultBurst, "requests kreact may send at once above --kube-api-qps")
}

// load resolves the flags as kubectl does and returns the client config and
// the context's namespace; a failure is a clusterError (exit code 4), a
// bad limit a usageError.
func (c *clusterFlags) load() (*rest.Config, string, error) {
	if c.qps == 0 || (c.qps < 0 && c.qps != -1) {
		return nil, "", &usageError{fmt.Sprintf("--kube-api-qps %v: want a positive number, or -1 for no limit", c.qps)}
	}
	if c.burst < 1 {
		return nil, "", &usageError{fmt.Sprintf("--kube-api-burst %d: want at least 1", c.burst)}
	}
	l, err := kubeconfig.Load(kubeconfig.Flags{
		Kubeconfig: c.kubeconfig, Context: c.context, UserAgent: "kreact/" + version,
		QPS: float32(c.qps), Burst: c.burst,
	})
	if err != nil {
		return nil, "", &clusterError{err}
	}
	c.source = l.Source
	return l.Config, l.Namespace, nil
}

// logFlags choose the log format and level.
type logFlags struct {
	format, level string
}

func (l *logFlags) register(fs *flagSet) {
	fs.stringVar(&l.format, "log-format", "", "text", "log format: text or json")
	fs.stringVar(&l.level, "log-level", "", "info", "log level: debug, info, warn or error")
}

// logger builds the slog logger on stderr and routes client-go's klog into it.
func (l *logFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, &usageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", l.level)}
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch l.format {
	case "text":
		h = slog.NewTextHandler(stderr, opts)
	case "json":
		h = slog.NewJSONHandler(stderr, opts)
	default:
		return nil, &usageError{fmt.Sprintf("--log-format %q: want text or json", l.format)}
	}
	logger := slog.New(h)
	routeKlog(logger.With("source", "client-go").Handler())
	return logger, nil
}
