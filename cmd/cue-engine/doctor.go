package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/cuedeck/cuedeck/internal/doctor"
)

func cmdDoctor(args []string) error {
	fs, c := newFlags("doctor")
	all := fs.Bool("all", false, "print every finding, not the first few of each kind")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := doctor.Run(ctx, ws)
	if err != nil {
		return err
	}
	rep.Print(os.Stdout, doctor.PrintOptions{Colour: colourful(os.Stdout), All: *all})
	if n := rep.Errors(); n > 0 {
		return fmt.Errorf("doctor found %d errors", n)
	}
	return nil
}

// colourful reports whether f is a terminal that wants colour: NO_COLOR
// (https://no-color.org) and TERM=dumb turn it off.
func colourful(f *os.File) bool {
	if _, off := os.LookupEnv("NO_COLOR"); off || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
