package rules

import (
	"strings"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	const rule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: nightly}
spec:
  watch: [{resource: configmaps}]
%s
  script: "function onTick(ctx) {}"
`
	tests := []struct {
		name     string
		spec     string
		schedule string
		tz       string
		wantErr  string
	}{
		{name: "five fields", spec: `  schedule: "0 3 * * 1-5"`, schedule: "0 3 * * 1-5"},
		{name: "descriptor", spec: `  schedule: "@daily"`, schedule: "@daily"},
		{name: "time zone", spec: "  schedule: \"30 8 * * *\"\n  timeZone: Europe/Paris", schedule: "30 8 * * *", tz: "Europe/Paris"},
		{name: "CRON_TZ", spec: `  schedule: "CRON_TZ=America/New_York 0 9 * * *"`, schedule: "CRON_TZ=America/New_York 0 9 * * *"},
		{name: "null", spec: `  schedule: null`},
		{name: "bad field", spec: `  schedule: "61 * * * *"`, wantErr: `r.yaml:6:13: spec.schedule: "61 * * * *": end of range (61) above maximum (59): 61`},
		{name: "six fields", spec: `  schedule: "0 0 3 * * *"`, wantErr: `spec.schedule: "0 0 3 * * *": expected exactly 5 fields, found 6`},
		{name: "unknown zone", spec: "  schedule: \"@daily\"\n  timeZone: Mars/Olympus", wantErr: `r.yaml:7:13: spec.schedule: "@daily": unknown time zone "Mars/Olympus"`},
		{name: "two zones", spec: "  schedule: \"CRON_TZ=UTC @daily\"\n  timeZone: Europe/Paris", wantErr: `names its time zone (CRON_TZ=) and so does spec.timeZone`},
		{name: "time zone alone", spec: "  timeZone: Europe/Paris", wantErr: `r.yaml:6:13: spec.timeZone: applies to spec.schedule, which is not set`},
		{name: "with every", spec: "  every: 10s\n  schedule: \"@daily\"", wantErr: `r.yaml:7:3: spec.schedule: spec.every (at 6:3) and spec.schedule both call onTick; keep one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := Parse("r.yaml", []byte(strings.Replace(rule, "%s", tt.spec, 1)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rs[0].Schedule != tt.schedule || rs[0].TimeZone != tt.tz {
				t.Errorf("Schedule, TimeZone = %q, %q; want %q, %q", rs[0].Schedule, rs[0].TimeZone, tt.schedule, tt.tz)
			}
			if rs[0].Ticks() != (tt.schedule != "") {
				t.Errorf("Ticks() = %v", rs[0].Ticks())
			}
		})
	}
}

// A schedule is read in its time zone, daylight saving time included.
func TestScheduleNext(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec, tz string
		after    time.Time
		want     time.Time
	}{
		{"0 3 * * *", "", time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)},
		{"0 9 * * 1-5", "", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}, // Friday → Monday
		{"30 8 * * *", "Europe/Paris", time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 8, 30, 0, 0, paris)},
		{"CRON_TZ=Europe/Paris 30 8 * * *", "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 7, 30, 0, 0, time.UTC)},
		{"@hourly", "", time.Date(2026, 1, 1, 0, 59, 59, 0, time.UTC), time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		s, err := ParseSchedule(tt.spec, tt.tz)
		if err != nil {
			t.Fatalf("ParseSchedule(%q, %q): %v", tt.spec, tt.tz, err)
		}
		if got := s.Next(tt.after); !got.Equal(tt.want) {
			t.Errorf("%q in %q: Next(%v) = %v, want %v", tt.spec, tt.tz, tt.after, got, tt.want)
		}
	}
}
