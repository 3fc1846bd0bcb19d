package retrieve

import (
	"github.com/agentmem/agentmem"
)

// Contentless reports whether an input asks nothing of memory: it has no
// search term (agentmem.SearchTerms) but greetings, thanks, assent and
// small talk ("hello", "thanks, that's all for today", "how are you?").
// The context draws no memory for it and facts know nothing of it. The
// meaning of an input cannot tell this apart: "hello" is nearer to "User
// lives in Leeds." (cosine 0.23 with the built-in model) than "Where
// should I eat tonight?" is to "User is vegetarian." (0.11), which the
// context must carry.
func Contentless(input string) bool {
	for _, t := range agentmem.SearchTerms(input) {
		if !smallTalk[t] {
			return false
		}
	}
	return true
}

var smallTalk = map[string]bool{}

func init() {
	for _, w := range []string{"hello", "hi", "hey", "hiya", "yo", "howdy", "greetings", "morning", "afternoon", "evening", "night",
		"good", "great", "fine", "ok", "okay", "k", "kk", "cool", "nice", "sure", "yes", "yeah", "yep", "yup", "no", "nope", "nah",
		"thanks", "thank", "thx", "ty", "cheers", "ta", "appreciate", "appreciated", "bye", "goodbye", "later", "cya", "see",
		"lol", "lmao", "haha", "hahaha", "hehe", "wow", "oh", "ah", "hmm", "um", "uh", "alright", "right", "perfect", "awesome",
		"today", "tonight", "there", "everyone", "all", "doing", "going", "sorry", "please", "welcome", "np", "much", "lot", "again"} {
		smallTalk[w] = true
	}
}
