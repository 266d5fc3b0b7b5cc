// Package browsertest drives the dashboard in a real, headless Chromium
// against a service on 127.0.0.1 whose payment supplier hangs: the page
// must show the tile turn open within 2 s of the trip and closed again
// after recovery. It is a module of its own so that chromedp stays out of
// the library's dependencies. The test needs the Debian package chromium
// (make chromium installs it; make test depends on that).
package browsertest
