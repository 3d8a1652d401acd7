package markdown

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// FrontmatterNodes is a file's frontmatter as YAML nodes, for callers that
// rewrite it (task cards) and so need key order, value styles and comments,
// which the decoded Document.Frontmatter map loses.
type FrontmatterNodes struct {
	// Mapping is the top-level mapping. Its nodes' Line fields count from
	// the top of the file, like every line number of this package.
	Mapping *yaml.Node
	// BodyOffset is the byte offset just past the closing --- line.
	BodyOffset int
}

// ParseFrontmatterNodes reads the frontmatter block at the top of src. It
// reports ok false when src does not open one (no leading --- line). A block
// that is never closed, is not valid YAML or is not a mapping is reported as
// a *FrontmatterError with the file's line number; an empty block gives an
// empty mapping.
func ParseFrontmatterNodes(src []byte) (fm FrontmatterNodes, ok bool, err error) {
	raw, ok := splitFrontmatter(src)
	if !ok {
		return FrontmatterNodes{}, false, nil
	}
	if raw.closeLine == 0 {
		return FrontmatterNodes{}, true, &FrontmatterError{Line: 1, Msg: "frontmatter opened at line 1 is never closed with ---; " +
			"add a --- line after the YAML"}
	}
	const offset = 1
	var root yaml.Node
	if yerr := yaml.Unmarshal(raw.yaml, &root); yerr != nil {
		fe := yamlError(yerr, offset+zeroBasedLine(yerr), raw.closeLine)
		if l := fe.Line - offset; l >= 1 && bytes.IndexByte(yamlLine(raw.yaml, l), '\t') >= 0 {
			fe.Msg += " (indent YAML with spaces, not tabs)"
		}
		return FrontmatterNodes{}, true, fe
	}
	fm.BodyOffset = raw.bodyOffset
	if len(root.Content) == 0 {
		fm.Mapping = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		return fm, true, nil
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return FrontmatterNodes{}, true, &FrontmatterError{
			Line: top.Line + offset,
			Msg:  fmt.Sprintf("frontmatter must be a mapping of keys to values (key: value lines), not %s", nodeKindName(top)),
		}
	}
	shiftLines(top, offset, map[*yaml.Node]bool{})
	fm.Mapping = top
	return fm, true, nil
}

// shiftLines moves every node's line by offset, once per node (aliases share
// their anchors' nodes).
func shiftLines(n *yaml.Node, offset int, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset, seen)
	}
	shiftLines(n.Alias, offset, seen)
}
