package dashboard

import "io/fs"

// StaticFiles returns the embedded page, for tests.
func StaticFiles() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}
