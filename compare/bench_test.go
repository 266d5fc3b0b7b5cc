package compare_test

import (
	"testing"

	"github.com/fusebox-go/fusebox/compare"
)

// The benchmarks of package compare under go test, named for benchstat:
// BenchmarkClosed/lib=gobreaker/serial and so on. fusebox runs in every
// group, in the same run as its peers:
//
//	go test -run '^$' -bench . -benchmem -count 6 ./ | tee bench.txt
//	benchstat -col /lib bench.txt
//
// cmd/report runs the same cases and prints them with ratios.

func BenchmarkClosed(b *testing.B)      { runGroup(b, "Closed") }
func BenchmarkReject(b *testing.B)      { runGroup(b, "Reject") }
func BenchmarkSubmitAwait(b *testing.B) { runGroup(b, "SubmitAwait") }
func BenchmarkPolicy(b *testing.B)      { runGroup(b, "Policy") }

func runGroup(b *testing.B, group string) {
	byLib := map[string][]compare.Case{}
	var libs []string
	for _, c := range compare.Cases() {
		if c.Group != group {
			continue
		}
		if byLib[c.Lib] == nil {
			libs = append(libs, c.Lib)
		}
		byLib[c.Lib] = append(byLib[c.Lib], c)
	}
	for _, lib := range libs {
		b.Run("lib="+lib, func(b *testing.B) {
			for _, c := range byLib[lib] {
				b.Run(c.Mode(), c.F)
			}
		})
	}
}
