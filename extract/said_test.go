package extract_test

import "testing"

// TestHeuristic_NotMemories: questions, hypotheticals, requests to the
// assistant, quotes of others, small talk and talk about the conversation
// state nothing about the user.
func TestHeuristic_NotMemories(t *testing.T) {
	for _, say := range []string{
		"Where do you live? What is my name?",
		"Do I need a visa for Japan",
		"The weather is nice today.",
		"I'm 5 minutes late, sorry",
		"If I were rich I'd buy a boat.",
		"I'd love a cup of tea.",
		"I wish I had a dog.",
		"I would move to Spain if I could.",
		"I want you to remember this.",
		"I need you to help me with my CV.",
		"Can you recommend a book for my trip?",
		"Could you tell me more about my options?",
		"My boss said I should work harder.",
		"My mom thinks I'm too thin.",
		"I think so.", "I see.", "I guess.", "I know.", "I'm fine.", "I'm not sure.", "I agree.", "I hope so!",
		"I'm asking because it matters.",
		"I was wondering about the weather.",
		"I love it!",
		"I have a question.",
		"I have to go now.",
		"Thanks, I appreciate it.",
		"I'm looking for a good pasta recipe.",
		"In the story, I am a dragon who guards a castle.",
		"My character in the novel lives in Oslo.",
		"I want a short answer.",
		"In my opinion, I think it's fine.",
		"Yesterday I said I'd call you.",
		"This I know for sure.",
		"my neighbour's kid is learning the trumpet and it's awful", "This is my favorite part.", "It is my thing.",
		"Tired of this.", "Thinking of you!", "Quit it.", "I see your point.",
		"Same here.", "Nothing new here.", "I'm here, , and ready.",
		"Turned out fine.", "Stopped by the shop.", "Sold out.", "Ran out of milk.",
		"Got it.", "Went well.", "Told you so.", "Read this article.", "Sounds good.", "Made it!", "enjoyed your answer", "Love it!",
		"It's my 40th birthday next month.",
		// Orders that lead with a verb, and fragments that are not the user's.
		"write me a poem every morning", "check my essay please", "explain recursion every time I ask",
		"help me plan a trip every summer", "Looking for a good recipe.", "Mom jeans are back.", "two questions, quick ones",
		"a question about me: how old am I", "honestly I'm 5 minutes late",
		"If I moved to Oslo, would I need a car?", "Could you, as an expert, tell me what to do?", "Honestly, I don't know, what do you think?",
		"So, what do you think?", "My code throws a KeyError on line 12, any idea why?", "debug this pls: for i in range(10) print(i)",
		"no that's wrong, 7 times 8 is 56", "haha yes", "I'd rather not talk about that.", "I'd love a holiday", "had a great time at the party", "I love her", "I know a guy who fixes bikes", "have a look at this", "have a nice day", "Thanks, Tom, Anna, Bob", "red, green, blue", "on hold with the bank again", "Note: the meeting is at 3", "My friend said 'I'm moving to Berlin' - how should I respond?",
		"Translate 'I am a doctor and I live in Rome' into Italian.", "Roleplay: you are a landlord and I'm a tenant.",
		"\"I'm a vegetarian,\" said the character in my book.", "I had to leave early", "like every night", "Like an unhealthy amount.", "Kindly disregard my last message, I pressed send too early.", "had a great time", "had lunch with Tom", "Braga, not Porto", "sorry, I meant that", "I meant to ask about Porto", "I made a mistake earlier.", "Sorry, I wrote wrong.", "I meant the other one.", "my daughter is 5 minutes late", "phone is broken, can you help", "Hypothetically, if I were rich, what would I buy?", "don't do that", "can't wait to see you", "Morning all", "This is home", "no problem, thanks",
	} {
		checkHeuristic(t, say, nil)
	}
}

// TestHeuristic_Said: what a predicate says (said.go): a coordinated
// object is a memory each, but not one name ("the Leeds and Liverpool
// canal") or one time ("on Mondays and Wednesdays"); a preference ("I'd
// rather", "I much prefer", "come round to"), an ending ("don't actually
// have"), seeing a therapist, an age that is not one ("7 months
// pregnant").
func TestHeuristic_Said(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I have two cats, Luna and Milo.", []want{w("User has two cats, Luna and Milo.", "object=cats luna")}},
		{"I speak Portuguese and a bit of Spanish.", []want{
			w("User speaks Portuguese.", "object=portuguese"), w("User speaks a bit of Spanish.", "object=bit of spanish")}},
		{"I'm seeing a therapist for anxiety.", []want{w("User is seeing a therapist for anxiety.", "object=see a therapist for anxiety")}},
		{"I have two kids, Mia (9) and Noah (6), and we live near Utrecht.", []want{
			w("User has two kids, Mia 9 and Noah 6.", "object=kids mia"), w("User lives near Utrecht.", "object=live near utrecht")}},
		{"I'm 7 months pregnant", []want{w("User is 7 months pregnant.", "object=be 7 months pregnant")}},
		{"I'm vegan and also a Buddhist", []want{w("User is vegan.", "slot=diet"), w("User is a Buddhist.", "object=be a buddhist")}},
		{"I go to the gym on Mondays and Wednesdays", []want{w("User goes to the gym on Mondays and Wednesdays.", "object=go to the gym on mondays and wednesdays")}},
		{"we live on the Leeds and Liverpool canal", []want{w("User lives on the Leeds and Liverpool canal.", "object=live on the leeds and liverpool canal")}},
		{"I have a vegetable patch and an allotment with a shed", []want{
			w("User has a vegetable patch.", "object=have a vegetable patch"), w("User has an allotment with a shed.", "object=have an allotment with a shed")}},
		{"we're hoping to move to York next year", []want{w("User is hoping to move to York next year.", "object=hope to move to york next year")}},
		{"I have two kids (9 and 6)", []want{w("User has two kids 9 and 6.", "slot=number-of:kids")}},
		{"I much prefer tea", []want{w("User much prefers tea.", "object=tea")}},
		{"I don't actually have a dog", []want{w("User does not actually have a dog.", "object=dog", "negated", "retract")}},
		{"I don't eat pork or beef", []want{w("User does not eat pork.", "object=eat pork", "negated"), w("User does not eat beef.", "object=eat beef", "negated")}},
		{"Weirdly I've come round to olives", []want{w("User likes olives.", "object=olives")}},
		{"I'd rather take the train than fly", []want{w("User prefers to take the train than fly.", "object=to take the train than fly")}},
		{"I own a narrowboat, keep it on the Kennet and Avon", []want{
			w("User owns a narrowboat.", "object=own a narrowboat"), w("User keeps it on the Kennet and Avon.", "object=keep it on the kennet and avon")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
