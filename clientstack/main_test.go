//go:build !e2e

package clientstack_test

import (
	"testing"

	"github.com/kreact/kreact/internal/leaktest"
)

// TestMain fails the unit tests if a goroutine outlives them. (The e2e
// build has a TestMain of its own, which starts the test control plane.)
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
