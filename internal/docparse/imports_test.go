package docparse

import (
	"reflect"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestBuildRecordsImports(t *testing.T) {
	cases := []struct {
		path, content string
		want          []events.Link
	}{
		{"main.go", "package main\n\nimport (\n\t\"fmt\"\n\tedge \"github.com/cuedeck/cuedeck/internal/edge\"\n)\n\nimport _ \"embed\"\n\nfunc main() { fmt.Println(edge.New) }\n", []events.Link{
			{Target: "fmt", Line: 4, Kind: LinkImport},
			{Target: "github.com/cuedeck/cuedeck/internal/edge", Line: 5, Kind: LinkImport},
			{Target: "embed", Line: 8, Kind: LinkImport},
		}},
		// Broken after the imports: the imports still count.
		{"broken.go", "package x\n\nimport \"os\"\n\nfunc {\n", []events.Link{{Target: "os", Line: 3, Kind: LinkImport}}},
		{"app.py", "import os.path\nfrom auth.tokens import verify\n\nx = 1\n", []events.Link{
			{Target: "os.path", Line: 1, Kind: LinkImport},
			{Target: "auth.tokens", Line: 2, Kind: LinkImport},
		}},
		{"web/app.ts", "import { login } from './auth';\nconst x = require(\"lodash\");\n", []events.Link{
			{Target: "./auth", Line: 1, Kind: LinkImport},
			{Target: "lodash", Line: 2, Kind: LinkImport},
		}},
		{"notes.txt", "import nothing\n", nil},
	}
	for _, c := range cases {
		got := Build("app", c.path, c.content).Links
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: links %+v, want %+v", c.path, got, c.want)
		}
	}
}
