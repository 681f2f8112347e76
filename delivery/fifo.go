package delivery

// fifo is the storage of a Core's workqueue (workqueue.Queue): a ring
// buffer. client-go's default, a slice that Pop reslices from the front,
// has no room left behind its last item once it has drained, so at low
// rates, where the queue holds one key at a time, every Add allocated a
// new array. The ring reuses its array, grows by doubling, and shrinks by
// half when a quarter of it is used, so that a burst's backlog does not
// keep its memory. The workqueue calls it under its own lock.
type fifo[T comparable] struct {
	items []T
	head  int // index of the oldest item
	n     int // items held
}

// minFifo is the smallest array a fifo keeps.
const minFifo = 16

func (q *fifo[T]) Touch(T) {}

func (q *fifo[T]) Len() int { return q.n }

func (q *fifo[T]) Push(item T) {
	if q.n == len(q.items) {
		q.resize(max(minFifo, 2*len(q.items)))
	}
	q.items[(q.head+q.n)%len(q.items)] = item
	q.n++
}

// Pop removes the oldest item; the workqueue calls it only when Len is
// positive.
func (q *fifo[T]) Pop() T {
	var zero T
	item := q.items[q.head]
	q.items[q.head] = zero // the array must not keep what it held alive
	q.head = (q.head + 1) % len(q.items)
	q.n--
	if len(q.items) > minFifo && q.n <= len(q.items)/4 {
		q.resize(len(q.items) / 2)
	}
	return item
}

// resize moves the items to a new array of size c, oldest first.
func (q *fifo[T]) resize(c int) {
	items := make([]T, c)
	for i := range q.n {
		items[i] = q.items[(q.head+i)%len(q.items)]
	}
	q.items, q.head = items, 0
}
