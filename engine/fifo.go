package engine

import "sync"

// fifo is an unbounded queue of changes for one worker. push never blocks,
// so informer handlers never wait for scripts.
type fifo struct {
	mu     sync.Mutex
	items  []change
	closed bool
	ready  chan struct{} // has a token while items is non-empty or closed
}

func newFIFO() *fifo { return &fifo{ready: make(chan struct{}, 1)} }

func (f *fifo) push(c change) {
	f.mu.Lock()
	if !f.closed {
		f.items = append(f.items, c)
	}
	f.mu.Unlock()
	f.signal()
}

// close makes pop return false once the queued changes are taken.
func (f *fifo) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *fifo) signal() {
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// pop blocks for the next change; false means closed and empty.
func (f *fifo) pop() (change, bool) {
	for {
		f.mu.Lock()
		if len(f.items) > 0 {
			c := f.items[0]
			f.items[0] = change{}
			f.items = f.items[1:]
			more := len(f.items) > 0
			f.mu.Unlock()
			if more {
				f.signal()
			}
			return c, true
		}
		closed := f.closed
		f.mu.Unlock()
		if closed {
			return change{}, false
		}
		<-f.ready
	}
}

func (f *fifo) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}
