package prune

import "fmt"

// Tools maps the tool and parameter names an agent uses onto the roles the
// supersede rules speak of. SeedTools is the seed's (and opencode's) naming;
// ClaudeCodeTools is Claude Code's.
type Tools struct {
	Read      []string
	Write     []string
	Edit      []string
	Glob      []string
	Grep      []string
	TodoWrite []string
	TodoRead  []string

	// FilePathParams are the read/write/edit parameters that name the file,
	// tried in order; the first non-empty string is the file key.
	FilePathParams []string
	// PathParam, PatternParam and IncludeParam make the glob and grep keys.
	PathParam    string
	PatternParam string
	IncludeParam string

	// TodosParam is the todowrite parameter holding the list of todos.
	// Todos are matched across writes by TodoIDField, or by their content
	// (TodoContentField) when they carry no id.
	TodosParam       string
	TodoIDField      string
	TodoContentField string
	TodoStatusField  string
}

// SeedTools is the naming of seed 001: read/write/edit/glob/grep/todowrite/
// todoread with filePath, path, pattern and include.
func SeedTools() Tools {
	return Tools{
		Read:             []string{"read"},
		Write:            []string{"write"},
		Edit:             []string{"edit"},
		Glob:             []string{"glob"},
		Grep:             []string{"grep"},
		TodoWrite:        []string{"todowrite"},
		TodoRead:         []string{"todoread"},
		FilePathParams:   []string{"filePath"},
		PathParam:        "path",
		PatternParam:     "pattern",
		IncludeParam:     "include",
		TodosParam:       "todos",
		TodoIDField:      "id",
		TodoContentField: "content",
		TodoStatusField:  "status",
	}
}

// ClaudeCodeTools is Claude Code's naming: Read, Write, Edit (and MultiEdit,
// NotebookEdit) with file_path or notebook_path; Glob and Grep with path,
// pattern and Grep's glob filter as the include part; TodoWrite, whose todos
// carry no id and are matched by content. TodoRead is kept for the versions
// that had it.
func ClaudeCodeTools() Tools {
	return Tools{
		Read:             []string{"Read"},
		Write:            []string{"Write"},
		Edit:             []string{"Edit", "MultiEdit", "NotebookEdit"},
		Glob:             []string{"Glob"},
		Grep:             []string{"Grep"},
		TodoWrite:        []string{"TodoWrite"},
		TodoRead:         []string{"TodoRead"},
		FilePathParams:   []string{"file_path", "notebook_path"},
		PathParam:        "path",
		PatternParam:     "pattern",
		IncludeParam:     "glob",
		TodosParam:       "todos",
		TodoIDField:      "id",
		TodoContentField: "content",
		TodoStatusField:  "status",
	}
}

type role uint8

const (
	roleOther role = iota
	roleRead
	roleWrite
	roleEdit
	roleGlob
	roleGrep
	roleTodoWrite
	roleTodoRead
)

func (r role) touchesFile() bool { return r == roleRead || r == roleWrite || r == roleEdit }

func (r role) changesFile() bool { return r == roleWrite || r == roleEdit }

// roles indexes t by tool name. A name given two roles is a configuration
// error.
func (t Tools) roles() (map[string]role, error) {
	m := make(map[string]role)
	for _, g := range []struct {
		names []string
		r     role
	}{
		{t.Read, roleRead}, {t.Write, roleWrite}, {t.Edit, roleEdit},
		{t.Glob, roleGlob}, {t.Grep, roleGrep},
		{t.TodoWrite, roleTodoWrite}, {t.TodoRead, roleTodoRead},
	} {
		for _, n := range g.names {
			if prev, ok := m[n]; ok && prev != g.r {
				return nil, fmt.Errorf("%w: tool %q has two roles", ErrInvalidConfig, n)
			}
			m[n] = g.r
		}
	}
	return m, nil
}

func (t Tools) isZero() bool {
	return len(t.Read)+len(t.Write)+len(t.Edit)+len(t.Glob)+len(t.Grep)+len(t.TodoWrite)+len(t.TodoRead) == 0 &&
		len(t.FilePathParams) == 0 && t.PathParam == "" && t.PatternParam == "" && t.IncludeParam == "" &&
		t.TodosParam == "" && t.TodoIDField == "" && t.TodoContentField == "" && t.TodoStatusField == ""
}

// fileKey is the seed's file key table. read/write/edit without a file path
// have no key (""); a missing glob or grep part is an empty string.
func (t Tools) fileKey(r role, params map[string]any) string {
	switch r {
	case roleRead, roleWrite, roleEdit:
		for _, p := range t.FilePathParams {
			if s, _ := params[p].(string); s != "" {
				return s
			}
		}
		return ""
	case roleGlob:
		return "glob:" + str(params[t.PathParam]) + ":" + str(params[t.PatternParam])
	case roleGrep:
		return "grep:" + str(params[t.PathParam]) + ":" + str(params[t.PatternParam]) + ":" + str(params[t.IncludeParam])
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
