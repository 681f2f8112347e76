package engine

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/internal/residency"
)

// SyncView is what WaitForSync reads to tell whether the running rules
// have caught up: the engine's rules (Engine.Status) and the informers
// under them (dynamicinformer.Manager.Status).
type SyncView struct {
	Rules     func() []Status
	Informers func() []dynamicinformer.WatchStatus
}

// RulesBehind is the one predicate behind both the "caches synced" log
// line and /readyz: it returns the running rules whose watches have not all
// delivered their initial list, sorted. Rules waiting for their resources
// to be served do not count; they have nothing to list yet.
func RulesBehind(rules []Status) []string {
	var behind []string
	for _, s := range rules {
		if s.Running && !s.Synced {
			behind = append(behind, s.Rule)
		}
	}
	slices.Sort(behind)
	return behind
}

// WaitForSync returns once every running rule has caught up (rulesBehind
// is empty), or when ctx ends. Every report interval it logs which rules
// it waits for and how far their informers are; at the end it logs the
// "caches synced" line with what the rules' informers hold.
//
// The initial sync is when kreact allocates the most at once: every
// object is decoded and handed to every rule's handlers as an initial
// add. So that this peak does not set the process's memory for good,
// WaitForSync runs Go's collector four times as often meanwhile (GOGC 25,
// unless GOGC is set), and once the rules have handled their initial
// adds (at most syncDrainBound after the caches synced) it restores the
// collector and returns the memory freed since to the operating system.
// docs/performance.md, "Initial sync", has the figures: both lowered kreact's
// peak and steady RSS against a bare informer's, for more CPU during the
// sync (GOGC 25 rather than 50 is issue 39's, for a million objects in a
// gigabyte).
func WaitForSync(ctx context.Context, logger *slog.Logger, v SyncView, poll, report time.Duration) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(syncGCPercent))
	}
	defer debug.FreeOSMemory()
	defer func() {
		// Starting touched much of the binary, which is most of an
		// idle kreact's RSS (see package residency).
		if n, err := residency.TrimExecutable(); err != nil {
			logger.Debug("resident executable pages not trimmed", "err", err)
		} else {
			logger.Debug("resident executable pages trimmed", "mappedBytes", n)
		}
	}()
	start := time.Now()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	lastReport := start
	for {
		behind := RulesBehind(v.Rules())
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
			summary, objects := dynamicinformer.Describe(informersOf(v.Informers(), behind))
			logger.Info("waiting for caches to sync",
				"elapsed", time.Since(start).Round(time.Second).String(),
				"rules", strings.Join(behind, ","),
				"objects", objects,
				"informers", summary)
		}
	}
	var running []string
	for _, s := range v.Rules() {
		if s.Running {
			running = append(running, s.Rule)
		} else {
			logger.Warn("rule waiting for its resources", "rule", s.Rule, "reason", s.Waiting)
		}
	}
	summary, objects := dynamicinformer.Describe(informersOf(v.Informers(), running))
	logger.Info("caches synced; kreact is running",
		"took", time.Since(start).Round(time.Millisecond).String(),
		"objects", objects,
		"informers", summary)
	waitDrained(ctx, v, poll, syncDrainBound)
}

// syncGCPercent is Go's GOGC during the initial sync, and syncDrainBound
// how long WaitForSync waits, after the caches synced, for the rules'
// initial adds to be handled before it returns memory: a rule that is slow
// to handle them keeps the rest of its queue as it is.
const (
	syncGCPercent  = 25
	syncDrainBound = time.Minute
)

// waitDrained waits until no running rule has calls waiting, for at most
// bound, or until ctx ends.
func waitDrained(ctx context.Context, v SyncView, poll, bound time.Duration) {
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		queued := 0
		for _, s := range v.Rules() {
			queued += s.Queued
		}
		if queued == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
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
