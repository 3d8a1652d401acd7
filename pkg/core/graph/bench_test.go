package graph

import "testing"

// The graphs are built once per benchmark; a call to Cycle or Linearise on
// a prepared graph is what a validate_task_graph or `cue scene` request pays.

func BenchmarkCycleChain100k(b *testing.B) {
	g := chain(100_000)
	g.prepare()
	for b.Loop() {
		if g.Cycle() != nil {
			b.Fatal("cycle")
		}
	}
}

func BenchmarkCycleRandomDAG100k(b *testing.B) {
	g := randomDAG(100_000, 3, 7)
	g.prepare()
	for b.Loop() {
		if g.Cycle() != nil {
			b.Fatal("cycle")
		}
	}
}

func BenchmarkLineariseRandomDAG100k(b *testing.B) {
	g := randomDAG(100_000, 3, 7)
	g.prepare()
	for b.Loop() {
		if _, err := g.Linearise(id(0)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWouldCycleRandomDAG100k(b *testing.B) {
	g := randomDAG(100_000, 3, 7)
	g.prepare()
	for b.Loop() {
		// Adding n099999 → n000000 searches forward from n000000 until
		// it meets n099999, the last node: close to a whole-graph walk.
		if g.WouldCycle(id(99_999), id(0)) == nil {
			b.Fatal("expected a cycle")
		}
	}
}
