package extract_test

import "testing"

// TestHeuristic_Clauses: how sentences are cut into clauses (clause.go):
// lists of verb phrases share their subject, an afterthought after a
// comma ends a clause, a list after "I'm" is a clause per item, "there"
// points back to a place, and a comment (", which …"), a condition, a
// relative clause on an object and someone else's clause after "and",
// "but" or "so" are not glued to the user's.
func TestHeuristic_Clauses(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I grew up in Texas, went to college in Boston, and now I live in Seattle.", []want{
			w("User grew up in Texas.", "object=grow up in texas"),
			w("User went to college in Boston.", "object=go to college in boston"),
			w("User lives in Seattle.", "slot=residence")}},
		{"I wear glasses, -4 in both eyes.", []want{w("User wears glasses.", "object=wear glasses")}},
		{"I live in Lisbon, Portugal.", []want{w("User lives in Lisbon, Portugal.", "slot=residence")}},
		{"I've been playing tennis since I was 8.", []want{w("User has been playing tennis since they were 8.", "object=play tennis since i was 8")}},
		{"I'm originally from Kyiv but I've lived in Warsaw for 8 years.", []want{
			w("User is originally from Kyiv.", "slot=origin"), w("User has lived in Warsaw for 8 years.", "slot=residence")}},
		{"I don't live in Porto anymore, I moved to Lisbon.", []want{
			w("User does not live in Porto anymore.", "slot=residence", "object=porto", "negated", "retract"),
			w("User moved to Lisbon.", "slot=residence")}},
		{"I'm Sam, 27, a UX designer in Dublin.", []want{
			w("User's name is Sam.", "slot=name"), w("User is 27.", "slot=age"), w("User is a UX designer in Dublin.", "slot=job")}},
		{"I'm 42, divorced, two kids.", []want{
			w("User is 42.", "slot=age"), w("User is divorced.", "slot=marital-status"), w("User has two kids.", "slot=number-of:kids")}},
		{"I'm from Lisbon, Portugal.", []want{w("User is from Lisbon, Portugal.", "slot=origin")}},
		{"I was born and raised in Glasgow.", []want{w("User was born and raised in Glasgow.", "slot=birthplace")}},
		{"started eating fish again so pescatarian now i guess", []want{
			w("User started eating fish again.", "slot=diet"), w("User is pescatarian now.", "slot=diet")}},
		{"I have a husband who works away most weeks", []want{w("User has a husband.", "object=husband"), w("User's husband works away most weeks.", "object=husband: work away most weeks")}},
		{"I have a piano that belonged to my late mother", []want{w("User has a piano.", "object=have a piano")}},
		{"moved to Leeds in 2019, married, no kids", []want{
			w("User moved to Leeds in 2019.", "slot=residence"), w("User is married.", "slot=marital-status"), w("User has no kids.", "object=have kids")}},
		{"I'm a plumber, licensed in Ohio.", []want{w("User is a plumber.", "slot=job"), w("User is licensed in Ohio.", "object=be licensed in ohio")}},
		{"I'm an early bird, usually in bed by 10", []want{w("User is an early bird.", "object=be an early bird")}},
		{"I'm Ana, 38, married with two kids", []want{
			w("User's name is Ana.", "slot=name"), w("User is 38.", "slot=age"), w("User is married.", "slot=marital-status"), w("User has two kids.", "slot=number-of:kids")}},
		{"wedding was in Sintra, 2016", []want{w("User's wedding was in Sintra in 2016.", "slot=date-of:wedding")}},
		{"i keep chickens, 6 hens in the back garden", []want{
			w("User keeps chickens.", "object=keep chickens"), w("User has 6 hens in the back garden.", "object=have 6 hens in the back garden")}},
		{"I have coeliac disease so everything has to be gluten free", []want{w("User has coeliac disease.", "object=have coeliac disease")}},
		{"I'm vegan but eggs from my own hens are fine", []want{w("User is vegan.", "slot=diet")}},
		{"I work nights so I sleep in the day", []want{w("User works nights.", "object=work nights"), w("User sleeps in the day.", "object=sleep in the day")}},
		{"I've lost 5kg so far", []want{w("User has lost 5kg so far.", "object=lose 5kg so far")}},
		{"I went vegan in May, no more cheese", []want{w("User went vegan in May.", "slot=diet")}},
		{"I love opera, especially Puccini", []want{w("User loves opera.", "object=opera")}},
		{"I was a miner for 30 years before I retired in 1990", []want{
			w("User was a miner for 30 years.", "object=be a miner for 30 years"),
			w("User retired in 1990.", "slot=employer", "retract"), w("User retired in 1990.", "slot=job")}},
		{"I want to visit Petra before I turn 50", []want{w("User wants to visit Petra before they turn 50.", "object=want to visit petra before i turn 50")}},
		{"had hip surgery in 2020 and it still hurts", []want{w("User had hip surgery in 2020.", "object=have hip surgery in 2020")}},
		{"freelance web designer, mostly shops and portfolios", []want{w("User is a freelance web designer.", "slot=job")}},
		{"I'm 45, recently divorced, and I've just started dating again", []want{
			w("User is 45.", "slot=age"), w("User is recently divorced.", "slot=marital-status"), w("User has just started dating again.", "object=date")}},
		{"I've lived in 6 countries, currently Singapore", []want{
			w("User has lived in 6 countries.", "object=live in 6 countries"), w("User lives in Singapore.", "slot=residence")}},
		{"Im autistic and phone calls are really hard for me", []want{w("User is autistic.", "object=be autistic")}},
		{"I have a bad left hip and the surgeon in Dunedin has booked me for a hip replacement in May.", []want{w("User has a bad left hip.", "object=have a bad left hip")}},
		{"planning to move to Canada next year if the visa comes through", []want{w("User is planning to move to Canada next year.", "object=plan to move to canada next year")}},
		{"my flight got cancelled and the airline won't rebook me", []want{w("User's flight got cancelled.", "object=flight: get cancelled")}},
		{"my partner Sam is vegan so cooking for two is a puzzle", []want{w("User's partner Sam is vegan.", "object=partner sam: be vegan")}},
		{"we own a flat in Edinburgh that we rent out", []want{w("User owns a flat in Edinburgh.", "object=own a flat in edinburgh")}},
		{"dont like horror films, give me a romcom any day", []want{w("User does not like horror films.", "object=horror films", "negated")}},
		{"I'm 55, a bit overweight, and just signed up for a 10k", []want{
			w("User is 55.", "slot=age"), w("User is a bit overweight.", "object=be a bit overweight"), w("User just signed up for a 10k.", "object=signed up for a 10k")}},
		{"I'm Deaf, BSL is my first language", []want{w("User is Deaf.", "object=be deaf"), w("User's first language is BSL.", "object=first language bsl")}},
		{"based in Cebu City, been here since 2015", []want{w("User is based in Cebu City.", "slot=residence"), w("User has been in Cebu City since 2015.", "object=be in cebu city since 2015")}},
		{"Originally Lagos, but I've been in Manchester for six years", []want{
			w("User is originally from Lagos.", "slot=origin"), w("User has been in Manchester for six years.", "object=be in manchester for six years")}},
		{"Hello sir I am from Chennai working in Dubai as site engineer", []want{
			w("User is from Chennai.", "slot=origin"), w("User is working in Dubai as site engineer.", "slot=workplace", "object=dubai")}},
		{"I smoke, about 10 a day", []want{w("User smokes, about 10 a day.", "object=smoke about 10 a day")}},
		{"just moved to Leeds, still unpacking", []want{w("User just moved to Leeds.", "slot=residence")}},
		{"I own a flat in Krakow that I rent out to students.", []want{w("User owns a flat in Krakow.", "object=own a flat in krakow")}},
		{"I'm studying law while working part time at a bakery", []want{
			w("User is studying law.", "slot=study"), w("User is working part time at a bakery.", "slot=employer")}},
		// "there" points back to the place of an earlier clause.
		{"We moved to New York in 2019 and my kids go to school there.", []want{
			w("User moved to New York in 2019.", "slot=residence"), w("User's kids go to school in New York.", "object=kids: go to school in new york")}},
		{"I went to Paris and there were crowds.", []want{w("User went to Paris.", "object=go to paris")}},
		// A comment (", which …") is not part of the fact; a frequency
		// after a comma continues the user's clause.
		{"I live in Porto, which I love, and I work as a nurse.", []want{w("User lives in Porto.", "slot=residence"), w("User works as a nurse.", "slot=job")}},
		{"I've had insomnia for years, usually can't fall asleep before 3am", []want{
			w("User has had insomnia for years.", "object=have insomnia for years"), w("User usually cannot fall asleep before 3am.", "object=fall asleep before 3am", "negated")}},
		// After "but" or "so", someone else's clause is not glued to the user's.
		{"My name is Oluwaseun but everyone calls me Seun.", []want{w("User's name is Oluwaseun.", "slot=name"), w("User goes by Seun.", "slot=nickname")}},
		{"I have a bad knee so no running for me.", []want{w("User has a bad knee.", "object=have a bad knee")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
