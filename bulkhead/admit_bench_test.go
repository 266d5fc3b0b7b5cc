package bulkhead_test

import (
	"testing"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// BenchmarkAdmitWhenFull is the saturation path of Admit: it must not allocate.
func BenchmarkAdmitWhenFull(b *testing.B) {
	full := func(b *testing.B) (*bulkhead.Bulkhead, *bulkhead.Waiter) {
		bh := new(bulkhead.Bulkhead)
		_, _ = bh.Resize(bulkhead.Config{Slots: 1, Queue: 1})
		bh.Admit(nil)
		w := new(bulkhead.Waiter)
		bh.Admit(w)
		return bh, new(bulkhead.Waiter)
	}
	b.Run("serial", func(b *testing.B) {
		bh, w := full(b)
		b.ReportAllocs()
		for b.Loop() {
			if bh.Admit(w) != bulkhead.Full {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		bh, _ := full(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := new(bulkhead.Waiter)
			for pb.Next() {
				if bh.Admit(w) != bulkhead.Full {
					b.Error("admitted")
					return
				}
			}
		})
	})
}
