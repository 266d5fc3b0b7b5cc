//go:build !linux

package shed

// threadTimes is not known outside Linux: the shedder then reads every
// interval as busy, and the run queue's delay alone decides.
func threadTimes(func(tid string, run, delay int64)) bool { return false }
