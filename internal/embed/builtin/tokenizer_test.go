package builtin

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

func testModel(t testing.TB) *model {
	t.Helper()
	m, err := sharedModel()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTokensMatchReference(t *testing.T) {
	m := testModel(t)
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"hello world", []int{2002, 102, 311}},
		{"how do I log in", []int{140, 64, 16, 3063, 15}},
		{"", nil},
	} {
		if got := m.tok.tokens(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("tokens(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestTokensNormaliseWhitespaceAsSentencePiece(t *testing.T) {
	m := testModel(t)
	want := m.tok.tokens("cell growth rate")
	for _, text := range []string{"cell\ngrowth rate", " cell\t growth\r\n\nrate \n"} {
		if got := m.tok.tokens(text); !slices.Equal(got, want) {
			t.Errorf("tokens(%q) = %v, want %v as for single spaces", text, got, want)
		}
	}
}

func TestTokensMergeUnknownRuns(t *testing.T) {
	m := testModel(t)
	got := m.tok.tokens("a 漢漢漢漢 b")
	zeros := 0
	for i, id := range got {
		if id == unknownID {
			zeros++
			if i > 0 && got[i-1] == unknownID {
				t.Fatalf("tokens = %v: adjacent unknowns", got)
			}
		}
	}
	if zeros == 0 {
		t.Fatalf("tokens = %v: want an unknown", got)
	}
}

func TestTokensClipAt128(t *testing.T) {
	m := testModel(t)
	if got := len(m.tok.tokens(strings.Repeat("banana bread recipe ", 200))); got != maxTokens {
		t.Fatalf("len(tokens) = %d, want %d", got, maxTokens)
	}
}

// The weights are checked after the model loaded, which released their
// pages: what is read back must be the executable's bytes, not zeros.
func TestModelFilesMatchProvenance(t *testing.T) {
	testModel(t)
	prov, err := modelFS.ReadFile("model/PROVENANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(prov))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || len(f[0]) != 64 {
			continue
		}
		data, err := modelFS.ReadFile("model/" + f[1])
		if shard, ok := shards[f[1]]; ok {
			data, err = []byte(shard), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != f[0] {
			t.Errorf("%s: sha256 %s, want %s", f[1], got, f[0])
		}
		checked++
	}
	if checked != 10 {
		t.Fatalf("checked %d files, want 10", checked)
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"hello world", "how do I log in", "", " ", "ｈｅｌｌｏ　ｗｏｒｌｄ", "a 漢字 😀 b", "\xff\xfe", "::  :-)"} {
		f.Add(s)
	}
	m, err := sharedModel()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ids := m.tok.tokens(text)
		if len(ids) > maxTokens {
			t.Fatalf("%d tokens", len(ids))
		}
		for i, id := range ids {
			if id < 0 || id >= len(m.tok.scores) || (id > 0 && id < reservedIDs) {
				t.Fatalf("token %d: id %d", i, id)
			}
			if id == unknownID && i > 0 && ids[i-1] == unknownID {
				t.Fatalf("tokens %v: adjacent unknowns", ids)
			}
		}
	})
}
