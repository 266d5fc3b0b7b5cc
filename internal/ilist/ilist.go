// Package ilist is the intrusive doubly linked list of the library: the
// bulkhead's queue of waiters and a future's fan-out waiters are both one.
// An element embeds its Links, so linking it allocates nothing, and the
// list itself is one pointer: its head, whose prev link is the tail.
//
// A List is not safe for concurrent use; its owner guards it.
package ilist

// Links are an element's place in a List. The zero value is unlinked.
type Links[T any] struct {
	prev, next *T // circular while linked: the head's prev is the tail
}

// Elem is a pointer to an element that embeds its Links.
type Elem[T any] interface {
	*T
	Links() *Links[T]
}

// List is a FIFO list of elements. The zero value is empty.
type List[T any, P Elem[T]] struct {
	head P
}

// Linked reports whether e is in a list.
func Linked[T any, P Elem[T]](e P) bool { return e.Links().next != nil }

// Front returns the oldest element, or nil.
func (l *List[T, P]) Front() P { return l.head }

// PushBack links e, which must not be in a list, at the tail.
func (l *List[T, P]) PushBack(e P) {
	k := e.Links()
	if l.head == nil {
		k.prev, k.next = e, e
		l.head = e
		return
	}
	h := l.head.Links()
	tail := P(h.prev)
	k.prev, k.next = tail, l.head
	tail.Links().next = e
	h.prev = e
}

// Remove unlinks e, which must be in l.
func (l *List[T, P]) Remove(e P) {
	k := e.Links()
	if P(k.next) == e {
		l.head = nil // it was the only one
	} else {
		P(k.prev).Links().next = k.next
		P(k.next).Links().prev = k.prev
		if l.head == e {
			l.head = k.next
		}
	}
	k.prev, k.next = nil, nil
}

// PopFront unlinks and returns the oldest element, or nil.
func (l *List[T, P]) PopFront() P {
	e := l.head
	if e != nil {
		l.Remove(e)
	}
	return e
}
