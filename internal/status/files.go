package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// FilesAgreement compares the documents cue_docs holds for a repo with
// the repo's files: one whose file is gone, or whose sha256 differs, is
// served as the file no longer is. Files cue_docs lacks are ingest's own
// comparison's to find, at start and every 10 minutes: a count taken here
// would race the watcher.
type FilesAgreement struct {
	Repo string `json:"repo"`
	// Documents is how many indexed documents were compared.
	Documents int      `json:"documents"`
	Differ    []string `json:"differ,omitempty"`
	Gone      []string `json:"gone,omitempty"`
}

// FilesRemedy is what brings cue_docs back in line with the files.
const FilesRemedy = "ingest compares the files with cue_docs every 10 minutes and publishes again what differs; to do it now, restart the daemon (`cue down`, then `cue up`)"

// CompareFiles reads every document cue_docs holds for repo (their
// headers only) and compares each with its file in fsys. A file edited
// while this runs may show as differing: ask again.
func CompareFiles(ctx context.Context, js jetstream.JetStream, repo string, fsys fs.FS) (FilesAgreement, error) {
	a := FilesAgreement{Repo: repo}
	docs, err := ingest.ReadDocSummaries(ctx, js, []string{repo})
	if err != nil {
		return a, fmt.Errorf("cue_docs could not be read: %w", err)
	}
	for key, sum := range docs {
		if sum.Deleted || sum.Skip != "" {
			continue
		}
		_, rel, err := events.ParseDocKey(key)
		if err != nil {
			continue
		}
		a.Documents++
		data, err := fs.ReadFile(fsys, rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			a.Gone = append(a.Gone, rel)
		case err != nil:
			continue // unreadable files are ingest's to report
		case events.SHA256Hex(data) != sum.SHA256:
			a.Differ = append(a.Differ, rel)
		}
	}
	slices.Sort(a.Differ)
	slices.Sort(a.Gone)
	return a, nil
}

// Agrees is true when every compared document matches its file.
func (a FilesAgreement) Agrees() bool { return len(a.Differ)+len(a.Gone) == 0 }

// Sample is the first few of paths, for a message.
func Sample(paths []string) string {
	const few = 10
	s := strings.Join(paths[:min(len(paths), few)], ", ")
	if len(paths) > few {
		s += fmt.Sprintf(" and %s more", humanize.Thousands(len(paths)-few))
	}
	return s
}

// printFiles says whether cue_docs holds what the files hold.
func printFiles(w io.Writer, a *FilesAgreement, skipped string) {
	switch {
	case skipped != "":
		fmt.Fprintf(w, "sources\tnot compared with cue_docs: %s\n", skipped)
	case a == nil:
	case a.Agrees():
		fmt.Fprintf(w, "sources\tthe %s indexed documents of repo %s match their files\n", humanize.Thousands(a.Documents), a.Repo)
	default:
		if len(a.Differ) > 0 {
			fmt.Fprintf(w, "sources\tERROR repo %s: %s indexed documents differ from their files (%s); if you just edited them, run again\n", a.Repo, humanize.Thousands(len(a.Differ)), Sample(a.Differ))
		}
		if len(a.Gone) > 0 {
			fmt.Fprintf(w, "sources\tERROR repo %s: %s indexed documents have no file any more (%s)\n", a.Repo, humanize.Thousands(len(a.Gone)), Sample(a.Gone))
		}
		fmt.Fprintf(w, "  remedy\t%s\n", FilesRemedy)
	}
}
