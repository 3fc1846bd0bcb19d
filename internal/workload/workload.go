// Package workload generates the everyday-text workload of the speed
// benchmarks (issue 31): 30-word messages and 8-word queries drawn from a
// 250-word everyday vocabulary, so that every query word occurs in
// thousands of a large history's turns — the case where a full-text
// index that ranks every match is slow. The peers were measured on the
// same workload.
package workload

import (
	"math/rand/v2"
	"strings"
)

// Vocabulary is the 250 everyday words the messages and queries are
// drawn from: content words (no stop word, which search drops), so that
// every word of a query reaches the index.
var Vocabulary = strings.Fields(`
	morning evening night today tomorrow yesterday week weekend month year
	coffee tea breakfast lunch dinner bread cheese pasta rice soup salad
	chicken fish apple orange banana cake cookie sugar milk water juice
	kitchen garden house flat room door window table chair sofa bed car
	bike bus train station airport road street park beach river lake
	mountain forest city town village shop market store office school work
	job meeting project deadline email phone call message letter friend
	family mother father sister brother daughter son wife husband baby
	child kids neighbour colleague boss doctor nurse teacher student dog
	cat bird horse flower tree grass rain snow sun wind cold warm hot
	weather spring summer autumn winter holiday trip travel ticket hotel
	flight plan idea problem question answer reason story book film music
	song game party wedding birthday concert football tennis swimming
	running walking cycling yoga gym sport team money bill rent price
	budget bank card cash loan salary pay health sleep tired headache back
	knee medicine pill appointment clean wash cook bake buy sell fix build
	paint read write learn drive ride walk run swim play watch listen talk
	visit meet help happy sad busy late early quick slow easy hard cheap
	expensive new old big small long short good great nice best favourite
	computer laptop screen internet website app software code bug server
	photo camera picture video news paper language english spanish french
	lesson course exam class homework shirt shoes jacket dress hat bag
	coat garage basement balcony roof wall floor
`)

// Message returns a 30-word message drawn from Vocabulary.
func Message(rng *rand.Rand) string { return words(rng, 30) + "." }

// Query returns an 8-word query drawn from Vocabulary.
func Query(rng *rand.Rand) string { return words(rng, 8) + "?" }

func words(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = Vocabulary[rng.IntN(len(Vocabulary))]
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// Turn is one message of a Conversation.
type Turn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ConversationSeed seeds the conversation of the context benchmarks: the
// peers' harness (bench/peers) reads the same turns, exported by this
// package's TestExport.
const ConversationSeed = 31

// Conversation returns the first n turns of one everyday conversation
// (Message's text, the user's and the assistant's in turn), the same for
// the same seed: a longer conversation begins with a shorter one's turns.
func Conversation(seed uint64, n int) []Turn {
	rng := rand.New(rand.NewPCG(seed, seed))
	turns := make([]Turn, n)
	for i := range turns {
		turns[i] = Turn{Role: "user", Content: Message(rng)}
		if i%2 == 1 {
			turns[i].Role = "assistant"
		}
	}
	return turns
}
