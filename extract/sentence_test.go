package extract_test

import "testing"

// TestHeuristic_Sentences: what leads a sentence (sentence.go): a time or
// a subordinate clause dates its main clause, a greeting or an apology
// ends at its comma, a correction takes back what was said before; and a
// sentence of one word, "call me …", "forget what I said about …", "3
// months smoke free", a favourite said the other way round.
func TestHeuristic_Sentences(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"The Remains of the Day is my all-time favourite novel.", []want{w("User's all-time favourite novel is The Remains of the Day.", "slot=favourite:novel")}},
		{"spicy food is my thing, the hotter the better", []want{w("User loves spicy food.", "object=spicy food")}},
		{"Last year we moved to Porto and I started a new job at a bakery", []want{
			w("User moved to Porto last year.", "slot=residence"), w("User started a new job at a bakery last year.", "slot=employer")}},
		{"Since my divorce I live with my parents, for now", []want{w("User lives with their parents.", "object=live with my parents")}},
		{"After we married we moved to Leeds", []want{w("User moved to Leeds after they married.", "slot=residence")}},
		{"Cooking is my great joy", []want{w("User loves cooking.", "object=cooking")}},
		{"Call me Dave, everyone does. Full name's David Okafor.", []want{w("User goes by Dave.", "slot=nickname"), w("User's name is David Okafor.", "slot=name")}},
		{"since moving to Oslo in 2022 I've picked up skiing", []want{w("User moved to Oslo in 2022.", "slot=residence"), w("User has picked up skiing.", "object=pick up skiing")}},
		{"graduated!", []want{
			w("User graduated.", "slot=job", "object=student", "retract"), w("User graduated.", "slot=study", "retract"), w("User graduated.", "object=graduate")}},
		{"forget what I said about the marathon", []want{w("User took back what they said about marathon.", "object=marathon", "retract")}},
		{"nurse.", []want{w("User is a nurse.", "slot=job")}},
		{"vegetarian.", []want{w("User is vegetarian.", "slot=diet")}},
		{"ENGAGED!!!", []want{w("User is engaged.", "slot=marital-status")}},
		{"I'm 27 - sorry, 28", []want{w("User is 27.", "slot=age"), w("User is 28.", "slot=age", "object=28")}},
		{"Sorry, I meant Galway - my sister lives in Galway, not Dublin.", []want{w("User meant Galway, not Dublin.", "object=galway", "corrects=Dublin")}},
		{"Please keep answers short, I prefer bullet points.", []want{w("User prefers bullet points.", "object=bullet points")}},
		{"3 months smoke free today!!", []want{w("User has been smoke free for 3 months.", "object=smoke", "retract"), w("User has been smoke free for 3 months.", "object=smoke free")}},
		{"actually scratch that about sushi, I don't really like it", []want{w("User took back what they said about sushi.", "object=sushi", "retract")}},
		{"Correction — it's amoxicillin I'm allergic to, not penicillin", []want{w("User meant amoxicillin, not penicillin.", "object=amoxicillin", "corrects=penicillin")}},
		{"sorry, I meant Braga, not Porto", []want{w("User meant Braga, not Porto.", "object=braga", "corrects=Porto")}},
		{"oops, I meant New York not Boston", []want{w("User meant New York, not Boston.", "object=new york", "corrects=Boston")}},
		{"typo, 31 not 13", []want{w("User meant 31, not 13.", "object=31", "corrects=13")}},
		{"oops, 28 actually", []want{w("User is 28.", "slot=age", "object=28")}},
		{"Sorry, I made a mistake earlier, I am 54, not 45.", []want{w("User is 54.", "slot=age")}},
		{"sorry, typing with one hand, my son Noah won't nap", []want{w("User's son Noah won't nap.", "object=son noah: nap", "negated")}},
		// A time that leads the sentence dates its clause.
		{"Yesterday I passed my driving test.", []want{w("User passed their driving test yesterday.", "object=driving test", "retract"), w("User passed their driving test yesterday.", "object=pass my driving test")}},
		{"Two days ago, my sister Ana moved to Rome.", []want{w("User's sister Ana moved to Rome two days ago.", "object=sister ana: move to rome")}},
		{"On Sundays I go swimming with my dad.", []want{w("User goes swimming with their dad on Sundays.", "object=go swimming with my dad")}},
		{"In 2015 I ran my first marathon.", []want{w("User ran their first marathon in 2015.", "object=run my first marathon")}},
		{"Next year I'm starting a PhD in Berlin.", []want{w("User is starting a PhD in Berlin next year.", "object=start a phd in berlin")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
