package shed

import (
	"os"
	"strconv"
	"strings"
)

// threadTimes calls f with each thread's CPU time and the time it waited,
// runnable, for the operating system to run it (/proc/self/task/*/schedstat),
// in nanoseconds. It returns false where the kernel does not report them.
func threadTimes(f func(tid string, run, delay int64)) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // a thread that just ended
		}
		fs := strings.Fields(string(b))
		if len(fs) < 2 {
			return false
		}
		r, err1 := strconv.ParseInt(fs[0], 10, 64)
		d, err2 := strconv.ParseInt(fs[1], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		f(t.Name(), r, d)
	}
	return true
}
