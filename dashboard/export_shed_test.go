package dashboard

import "github.com/fusebox-go/fusebox/shed"

// AddShedderStats is AddShedder over any source of stats, for tests: a
// real shedder sheds only under a real overload of the CPU.
func (h *Handler) AddShedderStats(name string, stats func() shed.Stats) {
	h.addShedder("AddShedder", name, stats)
}
