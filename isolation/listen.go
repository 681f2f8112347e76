package isolation

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// message is what a Supervisor sends its child, one JSON object per line:
// every rule moved to it so far.
type message struct {
	Moved []Move `json:"moved"`
}

// maxMessage bounds a message's line. A Move is two short strings, and a
// rule is moved at most once per version.
const maxMessage = 16 << 20

// Listen reads the messages of the kreact run that started this process
// from r (its standard input) and sets their moves on s (SetMoved). It
// returns once the first message is read, which a Supervisor sends at
// once, so that the first Load already runs the moved rules, and then
// follows the later ones on a goroutine of its own until r ends. A first
// message that cannot be read is an error; r ending first is not (no rule
// was moved).
func Listen(s *Split, r io.Reader) error {
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, maxMessage)
	read := func() (message, bool, error) {
		var m message
		if !lines.Scan() {
			return m, false, lines.Err()
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			return m, false, fmt.Errorf("isolated rules: a message from kreact run: %w", err)
		}
		return m, true, nil
	}
	first, ok, err := read()
	if !ok {
		return err
	}
	s.SetMoved(first.Moved)
	go func() {
		for {
			m, ok, err := read()
			if !ok {
				if err != nil {
					s.logger().Error("isolated rules: no longer hearing of the rules kreact run moves here", "error", err)
				}
				return
			}
			s.SetMoved(m.Moved)
		}
	}()
	return nil
}
