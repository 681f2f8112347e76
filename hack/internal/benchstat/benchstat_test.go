package benchstat

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of ten", ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), 50, 5 * time.Millisecond},
		{"p99 of a hundred", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p100", ms(3, 1, 2), 100, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("percentile = %v, want %v", got, tt.want)
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestProcParsing(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "4242 (kre act) (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 123 456 789"
	cpu, err := ParseStatCPU(stat)
	if err != nil || cpu != 3.25 {
		t.Errorf("parseStatCPU = %v, %v; want 3.25 s", cpu, err)
	}
	status := "Name:\tkreact\nVmPeak:\t  900 kB\nVmHWM:\t   51200 kB\nVmRSS:\t 40000 kB\n"
	hwm, err := ParseStatusBytes(status, "VmHWM")
	if err != nil || hwm != 50<<20 {
		t.Errorf("VmHWM = %v, %v; want 50 MiB", hwm, err)
	}
	rss, err := ParseStatusBytes(status, "VmRSS")
	if err != nil || rss != 40000<<10 {
		t.Errorf("VmRSS = %v, %v; want 40000 KiB", rss, err)
	}
	if _, err := ParseStatCPU("4242 kreact S 1"); err == nil {
		t.Error("ParseStatCPU accepted a line without a command name")
	}
	if _, err := ParseStatusBytes("Name: x\nVmHWM:\t 1 kB\n", "VmRSS"); err == nil {
		t.Error("parseStatusBytes accepted a status without VmRSS")
	}
	if _, err := ParseStatusBytes("VmRSS:\t 1 MB\n", "VmRSS"); err == nil {
		t.Error("parseStatusBytes accepted a size not in kB")
	}
}
