package ilist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type item struct {
	links ilist.Links[item]
	id    int
}

func (i *item) Links() *ilist.Links[item] { return &i.links }

type list = ilist.List[item, *item]

func drain(l *list) []int {
	var ids []int
	for e := l.PopFront(); e != nil; e = l.PopFront() {
		ids = append(ids, e.id)
	}
	return ids
}

func TestList(t *testing.T) {
	tests := []struct {
		name   string
		push   int
		remove []int // ids removed before draining
		want   []int
	}{
		{"an empty list pops nothing", 0, nil, nil},
		{"elements come out in the order they went in", 4, nil, []int{0, 1, 2, 3}},
		{"removing the head leaves the rest in order", 4, []int{0}, []int{1, 2, 3}},
		{"removing the tail leaves the rest in order", 4, []int{3}, []int{0, 1, 2}},
		{"removing from the middle leaves the rest in order", 4, []int{1, 2}, []int{0, 3}},
		{"removing the only element empties the list", 1, []int{0}, nil},
		{"removing everything empties the list", 3, []int{2, 0, 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l list
			items := make([]*item, tt.push)
			for i := range items {
				items[i] = &item{id: i}
				l.PushBack(items[i])
				require.True(t, ilist.Linked(items[i]))
			}
			for _, id := range tt.remove {
				l.Remove(items[id])
				assert.False(t, ilist.Linked(items[id]), "removed %d", id)
			}
			assert.Equal(t, tt.want, drain(&l))
			assert.Nil(t, l.Front())
			for _, it := range items {
				assert.False(t, ilist.Linked(it), "item %d after draining", it.id)
			}
		})
	}
}

func TestAnElementCanBeLinkedAgain(t *testing.T) {
	var l list
	a, b := &item{id: 1}, &item{id: 2}
	l.PushBack(a)
	l.PushBack(b)
	l.Remove(a)
	l.PushBack(a)
	assert.Equal(t, []int{2, 1}, drain(&l))
}
