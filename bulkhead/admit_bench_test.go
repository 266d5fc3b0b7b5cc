package slots_test

import (
	"testing"

	"github.com/fusebox-go/fusebox/internal/slots"
)

// BenchmarkRejectWhenFull is the saturation path: it must not allocate.
func BenchmarkRejectWhenFull(b *testing.B) {
	full := func(b *testing.B) (*slots.Slots, *slots.Waiter) {
		bh := new(slots.Slots)
		bh.Init(1, 1, 0)
		bh.Admit(nil)
		w := new(slots.Waiter)
		bh.Admit(w)
		return bh, new(slots.Waiter)
	}
	b.Run("serial", func(b *testing.B) {
		bh, w := full(b)
		b.ReportAllocs()
		for b.Loop() {
			if bh.Admit(w) != slots.Full {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		bh, _ := full(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := new(slots.Waiter)
			for pb.Next() {
				if bh.Admit(w) != slots.Full {
					b.Error("admitted")
					return
				}
			}
		})
	})
}
