package extract

import (
	"testing"

	"github.com/agentmem/agentmem"
)

// benchTurns are user turns of the kinds the index job sees: statements,
// questions and small talk.
var benchTurns = []*agentmem.Message{
	{Seq: 1, Role: agentmem.RoleUser, Content: "Hi! I am vegetarian and my sister Ana lives in Porto. I moved from Berlin to Lisbon last year."},
	{Seq: 2, Role: agentmem.RoleUser, Content: "Can you recommend a restaurant near the river? Something cheap, please."},
	{Seq: 3, Role: agentmem.RoleUser, Content: "My daughter Mia starts school in September, and I'm training for the Berlin marathon."},
	{Seq: 4, Role: agentmem.RoleUser, Content: "I think so. The weather was great yesterday, we walked for hours."},
	{Seq: 5, Role: agentmem.RoleUser, Content: "I'm a software engineer at Google and I speak Portuguese and German. I can't eat peanuts."},
	{Seq: 6, Role: agentmem.RoleUser, Content: "What should I pack for a week in Japan in April? It is my first time there."},
}

// BenchmarkHeuristic measures the clause-based extractor against the
// regular-expression rules it replaced, on the same turns.
func BenchmarkHeuristic(b *testing.B) {
	b.Run("clauses", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Heuristic(benchTurns)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			legacyHeuristic(benchTurns)
		}
	})
}
