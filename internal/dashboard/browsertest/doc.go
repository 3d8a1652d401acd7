// Package browsertest drives the dashboard in headless Chromium, as a
// person would use it: a laptop daemon runs in-process on a temp
// workspace, tasks with a dependency are created over MCP, a transcript
// becomes memories, and the tests read each page, search, and save a
// screenshot of every page under artifacts/screenshots/ (or
// $CUE_ARTIFACTS/screenshots/).
//
// The tests need a Chromium: $CUE_CHROME, or chromium, chromium-browser or
// google-chrome on PATH. `make test` gets one with
// scripts/ensure-chromium.sh, which installs Debian's chromium when none is
// there. Without one the tests fail with that instruction; they never skip.
package browsertest
