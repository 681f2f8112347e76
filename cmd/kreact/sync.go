package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
)

// How often waitForSync looks at the rules, and how often it says what it
// is waiting for.
const (
	syncPoll   = 100 * time.Millisecond
	syncReport = 3 * time.Second
)

// syncView is what kreact run reads to tell whether the running rules have
// caught up: the engine's rules and the informers under them. Tests give
// it fakes.
type syncView struct {
	rules     func() []engine.Status
	informers func() []dynamicinformer.WatchStatus
}

func newSyncView(eng *engine.Engine, informers *dynamicinformer.Manager) syncView {
	return syncView{rules: eng.Status, informers: informers.Status}
}

// rulesBehind is the one predicate behind both the "caches synced" log
// line and /readyz: it returns the running rules whose watches have not all
// delivered their initial list, sorted. Rules waiting for their resources
// to be served do not count; they have nothing to list yet.
func rulesBehind(rules []engine.Status) []string {
	var behind []string
	for _, s := range rules {
		if s.Running && !s.Synced {
			behind = append(behind, s.Rule)
		}
	}
	slices.Sort(behind)
	return behind
}

// waitForSync returns once every running rule has caught up (rulesBehind
// is empty), or when ctx ends. Every report interval it logs which rules
// it waits for and how far their informers are; at the end it logs the
// "caches synced" line with what the rules' informers hold.
func waitForSync(ctx context.Context, logger *slog.Logger, v syncView, poll, report time.Duration) {
	start := time.Now()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	lastReport := start
	for {
		behind := rulesBehind(v.rules())
		if len(behind) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if time.Since(lastReport) >= report {
			lastReport = time.Now()
			summary, objects := describeInformers(informersOf(v.informers(), behind))
			logger.Info("waiting for caches to sync",
				"elapsed", time.Since(start).Round(time.Second).String(),
				"rules", strings.Join(behind, ","),
				"objects", objects,
				"informers", summary)
		}
	}
	var running []string
	for _, s := range v.rules() {
		if s.Running {
			running = append(running, s.Rule)
		} else {
			logger.Warn("rule waiting for its resources", "rule", s.Rule, "reason", s.Waiting)
		}
	}
	summary, objects := describeInformers(informersOf(v.informers(), running))
	logger.Info("caches synced; kreact is running",
		"took", time.Since(start).Round(time.Millisecond).String(),
		"objects", objects,
		"informers", summary)
}

// informersOf returns the informers that any of the rules watches through
// (a rule's watches carry its name as their owner).
func informersOf(all []dynamicinformer.WatchStatus, rules []string) []dynamicinformer.WatchStatus {
	var out []dynamicinformer.WatchStatus
	for _, s := range all {
		if slices.ContainsFunc(s.Owners, func(owner string) bool { return slices.Contains(rules, owner) }) {
			out = append(out, s)
		}
	}
	return out
}

// describeInformers summarises informers for a log line, e.g.
// `configmaps.v1: synced, 1200 objects; pods.v1: starting, 0 objects`,
// and returns how many objects they hold together. The count is what each
// informer has delivered so far: it grows while an initial list is being
// handed out and stays at 0 while the list is still being fetched.
func describeInformers(infs []dynamicinformer.WatchStatus) (string, int) {
	parts := make([]string, 0, len(infs))
	total := 0
	for _, s := range infs {
		state := s.Phase.String()
		if s.Synced {
			// The informer's own answer, not its loop's phase, which
			// catches up a moment later.
			state = "synced"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %d objects", s.Key, state, s.Objects))
		total += s.Objects
	}
	return strings.Join(parts, "; "), total
}
