//go:build !e2e

package metrics_test

import (
	"testing"

	"github.com/kreact/kreact/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
