package rules

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
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
func ParseSchedule(spec, tz string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("empty schedule")
	}
	prefixed := strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=")
	switch {
	case prefixed && tz != "":
		return nil, errors.New("the schedule names its time zone (CRON_TZ=) and so does spec.timeZone; keep one")
	case !prefixed:
		if tz == "" {
			tz = "UTC"
		}
		if _, err := time.LoadLocation(tz); err != nil {
			return nil, fmt.Errorf("unknown time zone %q: want an IANA name such as Europe/Paris", tz)
		}
		spec = "CRON_TZ=" + tz + " " + spec
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, err
	}
	return s, nil
}
