package rules

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/editdistance"
)

// Schedule tells when a calendar schedule (spec.schedule) is next due.
type Schedule interface {
	// Next returns the first time after t that the schedule is due.
	Next(t time.Time) time.Time
}

// cronParser reads the standard five fields (minute, hour, day of month,
// month, day of week) and the descriptors @yearly, @monthly, @weekly,
// @daily, @hourly and @every DURATION, with an optional CRON_TZ=ZONE
// prefix.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses spec.schedule in the time zone tz (an IANA name
// such as "Europe/Paris"; empty means UTC unless the schedule starts with
// CRON_TZ=ZONE). Times are those of the zone, daylight saving included.
// The error is the first of the problems the rule's decoder reports.
func ParseSchedule(spec, tz string) (Schedule, error) {
	if tz != "" {
		if err := checkZone(tz); err != nil {
			return nil, err
		}
	}
	if errs := scheduleErrors(spec, tz != ""); len(errs) > 0 {
		return nil, errs[0]
	}
	zone, fields, prefixed := cutZone(strings.TrimSpace(spec))
	if !prefixed {
		zone = cmp.Or(tz, "UTC")
	}
	return cronParser.Parse("CRON_TZ=" + zone + " " + fields)
}

// scheduleErrors returns every problem of a schedule on its own: its
// CRON_TZ= zone, a zone given twice (tzSet: spec.timeZone names one too)
// and its cron fields.
func scheduleErrors(spec string, tzSet bool) []error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return []error{errors.New("empty schedule")}
	}
	var errs []error
	zone, fields, prefixed := cutZone(spec)
	if prefixed {
		if tzSet {
			errs = append(errs, errors.New("the schedule names its time zone (CRON_TZ=) and so does spec.timeZone; keep one"))
		}
		if err := checkZone(zone); err != nil {
			errs = append(errs, err)
		}
	}
	if fields == "" {
		return append(errs, errors.New(`no schedule after the time zone (want "CRON_TZ=ZONE 0 3 * * *")`))
	}
	// The zone is checked above: UTC, so that the fields are checked
	// whatever it is.
	if _, err := cronParser.Parse("CRON_TZ=UTC " + fields); err != nil {
		errs = append(errs, fmt.Errorf("%w (want cron syntax such as \"0 3 * * *\" or \"@daily\")", err))
	}
	return errs
}

// cutZone splits "CRON_TZ=ZONE FIELDS" (or "TZ=ZONE FIELDS") into its
// zone and fields; prefixed is false when spec names no zone (fields is
// then spec).
func cutZone(spec string) (zone, fields string, prefixed bool) {
	rest, ok := strings.CutPrefix(spec, "CRON_TZ=")
	if !ok {
		rest, ok = strings.CutPrefix(spec, "TZ=")
	}
	if !ok {
		return "", spec, false
	}
	zone, fields, _ = strings.Cut(rest, " ")
	return zone, strings.TrimSpace(fields), true
}

// zones are the names of the IANA time zone database that Go carries
// (time/tzdata), one per line; a test keeps them those of the Go
// distribution. They are only for did-you-mean hints: time.LoadLocation
// decides what is a zone.
//
//go:embed zones.txt
var zones string

// maxZoneHint is longer than any zone name, by more than the edits a
// hint allows.
const maxZoneHint = 64

// checkZone returns an error, with a close zone's name if there is one,
// when name is not a time zone.
func checkZone(name string) error {
	if _, err := time.LoadLocation(name); err == nil {
		return nil
	}
	if hint := closeZone(name); hint != "" {
		return diag.Errorf("unknown time zone %q (did you mean %q?)", name, hint)
	}
	return diag.Errorf("unknown time zone %q: want an IANA name such as Europe/Paris", name)
}

// closeZone returns the zone closest to name, if one is close: at most
// two edits away, ignoring case, or whose city name is name ("Paris").
func closeZone(name string) string {
	if len(name) > maxZoneHint {
		return "" // no zone is close; and the cost stays that of reading it
	}
	best, bestDist := "", 3
	lower := strings.ToLower(name)
	for zone := range strings.Lines(zones) {
		zone = strings.TrimSpace(zone)
		lz := strings.ToLower(zone)
		if i := strings.LastIndexByte(lz, '/'); i >= 0 && lz[i+1:] == lower {
			return zone
		}
		if d := editdistance.AtMost(lower, lz, 2); d < bestDist {
			best, bestDist = zone, d
		}
	}
	return best
}
