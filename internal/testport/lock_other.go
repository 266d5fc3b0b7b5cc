//go:build !unix

package testport

// held names the ports handed out in this process.
var held []string

// reserve, where there is no flock, only keeps this process's callers
// apart.
func reserve(path string) error {
	for _, p := range held {
		if p == path {
			return errTaken
		}
	}
	held = append(held, path)
	return nil
}
