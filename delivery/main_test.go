package delivery

import (
	"testing"

	"github.com/kreact/kreact/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
