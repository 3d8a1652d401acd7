package agentsetup

import (
	"fmt"
	"strings"
)

// Diff is a unified-style line diff of a file's old and new content, with
// up to three lines of context around each change; "" when they are equal.
// Setup files are small, so a quadratic longest-common-subsequence is fine.
func Diff(name string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := lines(old), lines(new)
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	const context = 3
	show := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind != ' ' {
			for c := max(0, k-context); c <= min(len(ops)-1, k+context); c++ {
				show[c] = true
			}
		}
	}
	var out strings.Builder
	oldName := "a/" + name
	if len(old) == 0 {
		oldName = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ b/%s\n", oldName, name)
	for k, o := range ops {
		if !show[k] {
			if k > 0 && show[k-1] {
				out.WriteString("@@ …\n")
			}
			continue
		}
		fmt.Fprintf(&out, "%c%s\n", o.kind, o.text)
	}
	return out.String()
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
