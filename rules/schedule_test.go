package rules

import (
	"archive/zip"
	"os/exec"
	"path/filepath"
	"slices"
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
		{name: "unknown zone", spec: "  schedule: \"@daily\"\n  timeZone: Mars/Olympus", wantErr: `r.yaml:7:13: spec.timeZone: unknown time zone "Mars/Olympus": want an IANA name such as Europe/Paris`},
		{name: "misspelt zone", spec: "  schedule: \"@daily\"\n  timeZone: Europe/Pari", wantErr: `r.yaml:7:13: spec.timeZone: unknown time zone "Europe/Pari" (did you mean "Europe/Paris"?)`},
		{name: "zone in lower case", spec: "  schedule: \"@daily\"\n  timeZone: europe/paris", wantErr: `r.yaml:7:13: spec.timeZone: unknown time zone "europe/paris" (did you mean "Europe/Paris"?)`},
		{name: "city for a zone", spec: "  schedule: \"@daily\"\n  timeZone: Tokyo", wantErr: `r.yaml:7:13: spec.timeZone: unknown time zone "Tokyo" (did you mean "Asia/Tokyo"?)`},
		{name: "misspelt CRON_TZ", spec: `  schedule: "CRON_TZ=America/New_Yrok 0 9 * * *"`, wantErr: `r.yaml:6:13: spec.schedule: "CRON_TZ=America/New_Yrok 0 9 * * *": unknown time zone "America/New_Yrok" (did you mean "America/New_York"?)`},
		{name: "CRON_TZ alone", spec: `  schedule: "CRON_TZ=UTC"`, wantErr: `r.yaml:6:13: spec.schedule: "CRON_TZ=UTC": no schedule after the time zone`},
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

// Every problem of spec.schedule and spec.timeZone is reported at once,
// each where it is; they came one at a time.
func TestScheduleProblemsAllAtOnce(t *testing.T) {
	_, err := Parse("r.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: nightly}
spec:
  watch: [{resource: configmaps}]
  every: 1m
  schedule: "CRON_TZ=Europe/Pari 0 25 * * *"
  timeZone: Europe/Pari
  script: "function onTick(ctx) {}"
`))
	want := `r.yaml:7:3: spec.schedule: spec.every (at 6:3) and spec.schedule both call onTick; keep one
r.yaml:7:13: spec.schedule: "CRON_TZ=Europe/Pari 0 25 * * *": end of range (25) above maximum (23): 25 (want cron syntax such as "0 3 * * *" or "@daily")
r.yaml:7:13: spec.schedule: "CRON_TZ=Europe/Pari 0 25 * * *": the schedule names its time zone (CRON_TZ=) and so does spec.timeZone; keep one
r.yaml:7:13: spec.schedule: "CRON_TZ=Europe/Pari 0 25 * * *": unknown time zone "Europe/Pari" (did you mean "Europe/Paris"?)
r.yaml:8:13: spec.timeZone: unknown time zone "Europe/Pari" (did you mean "Europe/Paris"?)`
	if err == nil || err.Error() != want {
		t.Errorf("Parse = %v\nwant:\n%s", err, want)
	}
}

// zones.txt holds the zones of the Go distribution, for hints.
func TestZonesAreThoseOfGo(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	z, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	if got := strings.Join(names, "\n") + "\n"; got != zones {
		t.Errorf("zones.txt is not the list of zones of this Go; write it with\n  unzip -Z1 $(go env GOROOT)/lib/time/zoneinfo.zip | grep -v '/$' | LC_ALL=C sort > rules/zones.txt")
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
