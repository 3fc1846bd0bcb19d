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

// BenchmarkAddressed measures reading the name the assistant calls the
// user by in a long reply of the kind chat assistants write (markdown,
// advice, the name once).
func BenchmarkAddressed(b *testing.B) {
	reply := "Congratulations on the new role, Sophie! Three months is tight but doable. A rough order:\n\n" +
		"**Now (May)**\n- Confirm **start date, contract and relocation package** with HR.\n- Start the **work permit** paperwork: your employer usually sponsors it.\n" +
		"- Check your **passport validity** (at least 6 months beyond your planned stay).\n\n**June**\n- Book a **short scouting trip** to Bangkok if you can: neighbourhoods like Ari, Sukhumvit or Sathorn feel very different.\n" +
		"- Ask movers for **quotes**, and decide what you ship, store or sell.\n- Look into **pet import rules** for Simba early: rabies titer tests take months.\n\n" +
		"**July**\n- Give notice on your flat, sort **utilities and internet**, and close or keep your Kenyan accounts.\n- Plan your **first two weeks**: a serviced apartment gives you time to choose.\n\nWant me to turn this into a checklist with dates?"
	msgs := []*agentmem.Message{{Seq: 1, Role: agentmem.RoleUser, Content: "I just accepted a regional role based in Bangkok, starting in August."}, {Seq: 2, Role: agentmem.RoleAssistant, Content: reply}}
	b.ReportAllocs()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		addressedNames(msgs)
	}
}
