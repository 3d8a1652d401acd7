package codesearch

import (
	"path"
	"strings"

	"github.com/cuedeck/cuedeck/internal/embed/static"
)

// TrainingPairs are the set's functions a model may learn from without
// having seen the drawn queries: every documented function (its query,
// its code) outside the packages a query was drawn from, in any version
// of them (the module cache holds several), and none whose query says
// what a drawn query says.
func (s *Set) TrainingPairs() []static.Pair {
	held, asked := map[string]bool{}, map[string]bool{}
	for _, qi := range s.Queries {
		held[packageOf(s.Functions[qi].ID)] = true
		asked[strings.ToLower(s.Functions[qi].Query)] = true
	}
	var pairs []static.Pair
	for _, f := range s.Functions {
		if f.Query == "" || held[packageOf(f.ID)] || asked[strings.ToLower(f.Query)] {
			continue
		}
		pairs = append(pairs, static.Pair{Query: f.Query, Doc: f.Code})
	}
	return pairs
}

// packageOf is the directory of a function id without module versions:
// "mod/github.com/x/y@v1.2.0/z/f.go#F" is "mod/github.com/x/y/z".
func packageOf(id string) string {
	file, _, _ := strings.Cut(id, "#")
	parts := strings.Split(path.Dir(file), "/")
	for i, e := range parts {
		parts[i], _, _ = strings.Cut(e, "@")
	}
	return strings.Join(parts, "/")
}
