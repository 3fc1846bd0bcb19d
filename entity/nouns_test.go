package entity_test

import (
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tripAnswer is an assistant's markdown answer as models write them: a
// heading, a numbered list of bold imperatives, a bold word opening a
// paragraph, a table, a JSON code block and inline code.
const tripAnswer = "Great choice! Lisbon in May is lovely, and the hills of Lisbon reward good shoes. Here's a quick plan:\n\n" +
	"## Before You Go\n" +
	"1. **Check** the weather forecast a week ahead.\n" +
	"2. **Bring** comfortable shoes: the streets are steep.\n" +
	"3. **Book** the Jerónimos Monastery early.\n" +
	"- *Pack* light; `Config` nothing.\n\n" +
	"**Prices** are lower outside the centre.\n\n" +
	"| Day | Area | Tip |\n" +
	"|-----|------|-----|\n" +
	"| Monday | Alfama | Take Tram 28 early |\n" +
	"| Tuesday | Belém | Try the pastéis |\n\n" +
	"Step 4: Reserve A Table For Dinner\n\n" +
	"If you want to script it, here's the plan as JSON:\n\n" +
	"```json\n" +
	"{\n  \"City\": \"Lisbon\",\n  \"Days\": [{\"Day\": \"Monday\", \"Area\": \"Alfama\"}],\n  \"Budget\": \"Medium\"\n}\n" +
	"```\n\n" +
	"Enjoy the trip, and say hi to Priya!"

// TestProperNouns: the entities of ordinary turns without a model are the
// names of the people, places, organisations and things discussed, with
// a plausible type; a greeting is not part of a name; markdown's
// structure, imperatives, code, JSON, weekdays, months and pronouns give
// none.
func TestProperNouns(t *testing.T) {
	user := func(s string) *agentmem.Message { return &agentmem.Message{Role: agentmem.RoleUser, Content: s} }
	for _, tc := range []struct {
		name  string
		turns []*agentmem.Message
		want  []entity.Noun
	}{
		{"thanks", []*agentmem.Message{user("Thanks Priya!")}, []entity.Noun{{Name: "Priya", Type: "person"}}},
		{"no punctuation", []*agentmem.Message{user("Thanks Priya Patel")}, []entity.Noun{{Name: "Priya Patel", Type: "person"}}},
		{"thanks, name", []*agentmem.Message{user("Thanks, Gina. Still working on it.")}, []entity.Noun{{Name: "Gina", Type: "person"}}},
		{"interjection, name", []*agentmem.Message{user("Wow, Jon! That's awesome.")}, []entity.Noun{{Name: "Jon", Type: "person"}}},
		{"clause", []*agentmem.Message{user("I love Paris, and I miss it.")}, []entity.Noun{{Name: "Paris"}}},
		{"interjection, name, comma", []*agentmem.Message{user("Wow, John, that's rough. Yep Maria, Let's keep going.")},
			[]entity.Noun{{Name: "John", Type: "person"}, {Name: "Maria", Type: "person"}}},
		{"openers", []*agentmem.Message{user("Anytime, Nate! Woah Joanna, nice. Adding Lisbon to the list; me and I. That was it.")},
			[]entity.Noun{{Name: "Nate", Type: "person"}, {Name: "Joanna", Type: "person"}}},
		{"greeting", []*agentmem.Message{user("Hey Jon! Long time no chat. How's the studio?")}, []entity.Noun{{Name: "Jon", Type: "person"}}},
		{"drove", []*agentmem.Message{user("we drove to Whitby on Monday with Tom")},
			[]entity.Noun{{Name: "Whitby", Type: "place"}, {Name: "Tom", Type: "person"}}},
		{"doctor", []*agentmem.Message{user("my doctor Dr. Okafor upped my metformin")}, []entity.Noun{{Name: "Dr. Okafor", Type: "person"}}},
		{"kin", []*agentmem.Message{user("My daughter Lily is allergic to eggs. In March we saw Dr Patel about it.")},
			[]entity.Noun{{Name: "Lily", Type: "person"}, {Name: "Dr Patel", Type: "person"}}},
		{"pet", []*agentmem.Message{user("We lost our dog Bruno in May. I miss him.")}, []entity.Noun{{Name: "Bruno", Type: "pet"}}},
		{"work", []*agentmem.Message{user("I started at Acme Corp last month and I moved to Leeds in June.")},
			[]entity.Noun{{Name: "Acme Corp", Type: "organization"}, {Name: "Leeds", Type: "place"}}},
		{"book", []*agentmem.Message{user(`I'm reading "Dune" by Frank Herbert. It's a great story.`)},
			[]entity.Noun{{Name: "Dune"}, {Name: "Frank Herbert", Type: "person"}}},
		{"sentence start", []*agentmem.Message{user("Tom and I went to the Tate Modern. Yesterday was fun. Honestly, Whitby is better.")},
			[]entity.Noun{{Name: "Tom", Type: "person"}, {Name: "Tate Modern", Type: "place"}, {Name: "Whitby"}}},
		{"me and", []*agentmem.Message{user("me and Sarah are going to Ikea on Saturday")},
			[]entity.Noun{{Name: "Sarah", Type: "person"}, {Name: "Ikea", Type: "place"}}},
		{"never", []*agentmem.Message{user("OK! On Friday in January I told you I'm fine. BTW, LOL. Thanks!")}, nil},
		{"assistant answer", []*agentmem.Message{
			user("We're going to Lisbon in May with my sister Priya. Any tips?"),
			{Role: agentmem.RoleAssistant, Content: tripAnswer},
		}, []entity.Noun{{Name: "Lisbon", Type: "place"}, {Name: "Priya", Type: "person"}}},
		{"code", []*agentmem.Message{
			user("Why does my Go build fail?"),
			{Role: agentmem.RoleAssistant, Content: "Your `main.go` calls `Println` wrongly. Fix it:\n\n```go\nfunc main() {\n\tfmt.Println(\"Hello World\")\n}\n```\n\n" +
				"Then run `go build`. See [The Go Blog](https://go.dev/blog) or https://pkg.go.dev/Fmt for more; Go is strict about it."},
		}, []entity.Noun{{Name: "Go"}}},
		{"json reply", []*agentmem.Message{
			user("list the cities"),
			{Role: agentmem.RoleAssistant, Content: `{"Cities": [{"Name": "Porto", "Country": "Portugal"}], "Summary": "One"}`},
			{Role: agentmem.RoleAssistant, Content: "Here you are:\n{\"Name\": \"Porto\",\n\"Country\": \"Portugal\"}"},
		}, nil},
		{"assistant discussed", []*agentmem.Message{
			user("what should we do in Porto?"),
			{Role: agentmem.RoleAssistant, Content: "In Porto, walk the Ribeira and cross the Dom Luís Bridge. Livraria Lello is a bookshop; Livraria Lello gets crowded, so go early."},
		}, []entity.Noun{{Name: "Porto", Type: "place"}, {Name: "Livraria Lello"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := entity.ProperNouns(tc.turns, 20)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ProperNouns mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkNames measures the entities of a page of turns without a
// model, as indexing reads every turn: a user's turns and assistants'
// markdown answers; ns/turn is the cost of one turn.
func BenchmarkNames(b *testing.B) {
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "We're going to Lisbon in May with my sister Priya. Any tips?"},
		{Role: agentmem.RoleAssistant, Content: tripAnswer},
		{Role: agentmem.RoleUser, Content: "Thanks Priya! we drove to Whitby on Monday with Tom, and my doctor Dr. Okafor upped my metformin."},
		{Role: agentmem.RoleAssistant, Content: "That sounds like a lovely trip. Whitby Abbey is worth the climb; did Tom enjoy it? Keep an eye on how the new dose feels."},
		{Role: agentmem.RoleUser, Content: `I'm reading "Dune" by Frank Herbert. Caroline says it's slow but I love it.`},
		{Role: agentmem.RoleAssistant, Content: "Dune rewards patience. If you enjoy it, try **Hyperion** by Dan Simmons next:\n- *Epic* scope\n- Rich world-building\n- Six pilgrims, one journey"},
	}
	b.ReportAllocs()
	for b.Loop() {
		entity.Names(turns, 20)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(turns)), "ns/turn")
}
