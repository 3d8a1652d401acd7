package hook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// startDaemon starts `cue-engine up` for the workspace at root in the
// background, without waiting for it, and says what it did for the
// agent's context. A daemon still starting holds the workspace lock before
// it listens on the socket; then nothing is started twice.
func startDaemon(root string, env Env) string {
	if daemonStarting(root) {
		return "CueDeck's daemon for this workspace is starting; project context follows from the next prompt."
	}
	engine, err := findEngine(env)
	if err != nil {
		return fmt.Sprintf("CueDeck's daemon is not running and could not be started (%v). Run `cue up --detach` in %s.", err, root)
	}
	if err := os.MkdirAll(CacheDir(root), 0o755); err != nil {
		return fmt.Sprintf("CueDeck's daemon is not running and could not be started (%v). Run `cue up --detach` in %s.", err, root)
	}
	if err := spawn(engine, LogPath(root), env.Front, "up", "--workspace", root); err != nil {
		return fmt.Sprintf("CueDeck's daemon is not running and could not be started (%v). Run `cue up --detach` in %s.", err, root)
	}
	return fmt.Sprintf("CueDeck's daemon was not running; it is starting in the background for %s (log: %s). Project context follows once it has indexed.", root, LogPath(root))
}

// daemonStarting reports whether a process holds the workspace lock.
func daemonStarting(root string) bool {
	f, err := os.Open(LockPath(root))
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// uninitialised answers SessionStart outside a workspace: how to set one
// up, or, when the user's config allows it, starting `cue init` and `cue
// up` for the project in the background.
func uninitialised(cwd string, env Env) string {
	root := ProjectRoot(cwd)
	ai, err := readAutoInit(configDir(env))
	if err != nil {
		return fmt.Sprintf("CueDeck: %v. This project has no CueDeck workspace; to use one run `cue init` then `cue up --detach` in %s, and `cue hook install` to keep these hooks.", err, root)
	}
	if !ai.Enabled {
		return fmt.Sprintf("This project (%s) has no CueDeck workspace. To give agents its shared context and memory, run `cue init` then `cue up --detach` there, and `cue hook install` to register these hooks.", root)
	}
	if !hasFiles(root, ai.MinFiles) {
		return "" // a scratch directory: too small to be worth a workspace
	}
	engine, err := findEngine(env)
	if err != nil {
		return fmt.Sprintf("CueDeck auto-init is on but cue-engine was not found (%v); run `cue init` in %s.", err, root)
	}
	logPath := filepath.Join(os.TempDir(), "cuedeck-init-"+shortHash(root)+".log")
	// init then up, chained by a shell so that the hook need not wait for
	// init; "$0" and "$1" keep the paths out of the shell's parsing.
	err = spawn("/bin/sh", logPath, env.Front, "-c", `"$0" init --workspace "$1" && exec "$0" up --workspace "$1"`, engine, root)
	if err != nil {
		return fmt.Sprintf("CueDeck auto-init could not start (%v); run `cue init` in %s.", err, root)
	}
	return fmt.Sprintf("CueDeck is initialising a workspace for %s in the background (auto_init in %s; log: %s). Project context follows once it has indexed.", root, filepath.Join(configDir(env), "config.toml"), logPath)
}

func findEngine(env Env) (string, error) {
	if env.Engine == nil {
		return "", errors.New("no cue-engine configured")
	}
	return env.Engine()
}

// spawn starts prog detached from the hook (a session of its own, so
// Claude Code's signals to the hook do not reach it), output to logPath,
// and does not wait for it. front is passed on so that the engine prints
// `cue` commands with the front binary's path.
func spawn(prog, logPath, front string, args ...string) error {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devNull.Close()
	environ := os.Environ()
	if front != "" {
		environ = append(environ, FrontEnv+"="+front)
	}
	proc, err := os.StartProcess(prog, append([]string{prog}, args...), &os.ProcAttr{
		Env:   environ,
		Files: []*os.File{devNull, logFile, logFile},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return err
	}
	return proc.Release()
}

// FrontEnv names the environment variable through which the `cue` front
// tells cue-engine its own path, for the commands the engine prints.
const FrontEnv = "CUE_FRONT"

// hasFiles reports whether root holds at least n files, not counting
// hidden and vendored directories; it stops counting at n.
func hasFiles(root string, n int) bool {
	if n <= 0 {
		return true
	}
	count := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name[0] == '.' || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		count++
		if count >= n {
			return fs.SkipAll
		}
		return nil
	})
	return count >= n
}
