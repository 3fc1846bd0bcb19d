package extract_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// want is an expected memory: its text, and its slot, object, negation and
// retraction as "slot=residence", "object=peanuts", "negated", "retract".
type want struct {
	text  string
	facts []string
}

func w(text string, facts ...string) want { return want{text, facts} }

func facts(c extract.Candidate) []string {
	var f []string
	if c.Slot != "" {
		f = append(f, "slot="+c.Slot)
	}
	if c.Object != "" {
		f = append(f, "object="+c.Object)
	}
	if c.Negated {
		f = append(f, "negated")
	}
	if c.Retract {
		f = append(f, "retract")
	}
	if c.Corrects != "" {
		f = append(f, "corrects="+c.Corrects)
	}
	return f
}

func checkHeuristic(t *testing.T, say string, wants []want) {
	t.Helper()
	got := extract.Heuristic([]*agentmem.Message{{Seq: 7, Role: agentmem.RoleUser, Content: say}})
	var g, x []string
	for _, c := range got {
		if c.SeqFrom != 7 || c.SeqTo != 7 || c.Category == "" || c.Confidence <= 0 || c.Importance <= 0 {
			t.Errorf("%q: candidate %+v lacks provenance, category, confidence or importance", say, c)
		}
		g = append(g, fmt.Sprintf("%s %v", c.Text, facts(c)))
	}
	for _, w := range wants {
		x = append(x, fmt.Sprintf("%s %v", w.text, w.facts))
	}
	if !slices.Equal(g, x) {
		t.Errorf("%q:\n got %s\nwant %s", say, strings.Join(g, " | "), strings.Join(x, " | "))
	}
}

// TestHeuristic_Issue12: every statement quoted in issue 12 becomes the
// self-contained memories it states, with the slot, object, negation or
// retraction that consolidation needs for changes of fact.
func TestHeuristic_Issue12(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I am vegetarian and my sister Ana lives in Porto.", []want{
			w("User is vegetarian.", "slot=diet"),
			w("User's sister Ana lives in Porto.", "object=sister ana: live in porto")}},
		{"I moved from Berlin to Lisbon last year.", []want{w("User moved from Berlin to Lisbon last year.", "slot=residence")}},
		{"My daughter Mia starts school in September.", []want{
			w("User's daughter Mia starts school in September.", "object=daughter mia: start school in september")}},
		{"I can't eat peanuts.", []want{w("User cannot eat peanuts.", "object=peanuts", "negated")}},
		{"I'm training for the Berlin marathon.", []want{w("User is training for the Berlin marathon.", "object=train for the berlin marathon")}},
		{"I was born in Madrid.", []want{w("User was born in Madrid.", "slot=birthplace")}},
		{"We're expecting a baby in March.", []want{w("User is expecting a baby in March.", "object=expect a baby in march")}},
		{"I speak Portuguese and German.", []want{w("User speaks Portuguese.", "object=portuguese"), w("User speaks German.", "object=german")}},
		{"I work in Porto.", []want{w("User works in Porto.", "slot=workplace", "object=porto")}},
		{"I have a daughter named Mia.", []want{w("User has a daughter named Mia.", "object=daughter mia")}},
		{"I'm a software engineer at Google.", []want{w("User is a software engineer at Google.", "slot=job")}},
		{"I work as a nurse.", []want{w("User works as a nurse.", "slot=job")}},
		{"Actually I moved back to Berlin.", []want{w("User moved back to Berlin.", "slot=residence")}},
		{"I'm not vegetarian anymore.", []want{w("User is not vegetarian anymore.", "slot=diet", "object=vegetarian", "negated", "retract")}},
		{"I eat meat now.", []want{w("User eats meat now.", "slot=diet")}},
		{"My daughter is Lea.", []want{w("User's daughter is Lea.", "object=daughter lea")}},
		{"My daughter is Mia.", []want{w("User's daughter is Mia.", "object=daughter mia")}},
		{"I work as a teacher.", []want{w("User works as a teacher.", "slot=job")}},
		{"I moved to Lisbon", []want{w("User moved to Lisbon.", "slot=residence")}},
		{"I live in Porto.", []want{w("User lives in Porto.", "slot=residence")}},
		// From the brief of the extractor.
		{"My brother, who lives in Oslo, is a doctor.", []want{
			w("User's brother lives in Oslo.", "object=brother: live in oslo"),
			w("User's brother is a doctor.", "object=brother: be a doctor")}},
		{"My dog Rex is 3.", []want{w("User's dog Rex is 3.", "slot=age-of:dog rex", "object=3")}},
		{"I don't drink coffee.", []want{w("User does not drink coffee.", "object=drink coffee", "negated")}},
		{"I'm going to run a marathon.", []want{w("User is going to run a marathon.", "object=go to run a marathon")}},
		{"My boss is Tom.", []want{w("User's boss is Tom.", "slot=name-of:boss")}},
		{"I quit my job.", []want{w("User quit their job.", "slot=employer", "retract"), w("User quit their job.", "slot=job", "retract")}},
		{"I left Google.", []want{w("User left Google.", "slot=employer", "object=google", "retract"), w("User left Google.", "slot=job", "object=google", "retract")}},
		{"I no longer live in Porto.", []want{w("User no longer lives in Porto.", "slot=residence", "object=porto", "negated", "retract")}},
		{"I'm asking because I'm moving to Lisbon next month.", []want{w("User is moving to Lisbon next month.", "object=move to lisbon next month")}},
		{"I work at Google and live in Lisbon.", []want{w("User works at Google.", "slot=employer"), w("User lives in Lisbon.", "slot=residence")}},
		{"I'm allergic to peanuts, shellfish and soy.", []want{
			w("User is allergic to peanuts.", "object=peanuts"),
			w("User is allergic to shellfish.", "object=shellfish"),
			w("User is allergic to soy.", "object=soy")}},
		{"My wife and I live in Porto.", []want{w("User and their wife live in Porto.", "slot=residence")}},
		{"When I was 10, I moved to Paris.", []want{w("User moved to Paris when they were 10.", "slot=residence")}},
		{"I've been a teacher for ten years.", []want{w("User has been a teacher for ten years.", "slot=job")}},
		{"I'm from Brazil but I live in Canada now.", []want{w("User is from Brazil.", "slot=origin"), w("User lives in Canada now.", "slot=residence")}},
		{"We have a golden retriever named Max.", []want{w("User has a golden retriever named Max.", "object=retriever max")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestHeuristic_Changes: statements that change or end a fact say what
// they change: the verbs of ending (stopped, quit, gave up) end a habit by
// its verb and object, "anymore" ends a negated fact, selling ends a
// possession, cancelling a plan, breaking up a relationship, a death the
// fact of the one who died; a named employer left ends the job told with
// it; a promotion is a new job, graduating ends studying; the date of an
// event is a slot of its own; "I eat meat" and "I don't eat meat" are the
// same diet slot.
func TestHeuristic_Changes(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I stopped playing tennis after my knee injury.", []want{
			w("User stopped playing tennis after their knee injury.", "object=play tennis", "retract"),
			w("User stopped playing tennis after their knee injury.", "object=stop playing tennis after my knee injury")}},
		{"I quit smoking 3 months ago.", []want{
			w("User quit smoking 3 months ago.", "object=smoke", "retract"),
			w("User quit smoking 3 months ago.", "object=quit smoking 3 months ago")}},
		{"I gave up coffee last year.", []want{
			w("User gave up coffee last year.", "object=coffee", "retract"),
			w("User gave up coffee last year.", "object=give up coffee last year")}},
		{"I don't drink anymore.", []want{w("User does not drink anymore.", "object=drink", "negated", "retract")}},
		{"I don't have a car anymore.", []want{w("User does not have a car anymore.", "object=have a car", "negated", "retract")}},
		{"I don't like coffee anymore.", []want{w("User does not like coffee anymore.", "object=coffee", "negated")}},
		{"I sold my Civic and bought a Tesla.", []want{
			w("User sold their Civic.", "object=civic", "retract"), w("User sold their Civic.", "object=sell my civic"),
			w("User bought a Tesla.", "object=buy a tesla")}},
		{"We cancelled the Japan trip.", []want{w("User cancelled the Japan trip.", "object=japan", "retract")}},
		{"I canceled my dentist appointment.", []want{w("User canceled their dentist appointment.", "object=appointment", "retract")}},
		{"My wedding is in June.", []want{w("User's wedding is in June.", "slot=date-of:wedding")}},
		{"The wedding got moved to September.", []want{w("User's wedding is in September.", "slot=date-of:wedding")}},
		{"The party was postponed to next Friday.", []want{w("User's party is next Friday.", "slot=date-of:party")}},
		{"The party was great.", nil},
		{"I broke up with Lena.", []want{
			w("User broke up with Lena.", "slot=name-of:girlfriend", "object=lena", "retract"),
			w("User broke up with Lena.", "slot=name-of:boyfriend", "object=lena", "retract"),
			w("User broke up with Lena.", "slot=name-of:partner", "object=lena", "retract"),
			w("User broke up with Lena.", "slot=name-of:fiance", "object=lena", "retract"),
			w("User broke up with Lena.", "slot=name-of:fiancee", "object=lena", "retract"),
			w("User broke up with Lena.", "object=break up with lena")}},
		{"Tom and I got divorced last year.", []want{
			w("User and Tom got divorced last year.", "slot=name-of:wife", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:husband", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:partner", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:girlfriend", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:boyfriend", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:fiance", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=name-of:fiancee", "object=tom", "retract"),
			w("User and Tom got divorced last year.", "slot=marital-status")}},
		{"My dog Rex died.", []want{
			w("User's dog Rex died.", "object=dog rex", "retract"),
			w("User's dog Rex died.", "object=dog rex: die")}},
		{"Rex died last week, we're heartbroken.", []want{
			w("User's Rex died last week.", "object=rex", "retract"),
			w("User's Rex died last week.", "object=rex: die last week")}},
		{"I don't eat meat.", []want{w("User does not eat meat.", "slot=diet", "negated")}},
		{"I left Google to join Meta.", []want{
			w("User left Google to join Meta.", "slot=employer", "object=google", "retract"),
			w("User left Google to join Meta.", "slot=job", "object=google", "retract")}},
		{"I got promoted to senior developer.", []want{w("User got promoted to senior developer.", "slot=job")}},
		{"I graduated from UCLA.", []want{
			w("User graduated from UCLA.", "slot=job", "object=student", "retract"),
			w("User graduated from UCLA.", "slot=study", "retract"),
			w("User graduated from UCLA.", "object=graduate from ucla")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestHeuristic_ChangesInOtherWords: changes told the way people talk
// say what they change: starting at or joining an employer is a job,
// going off or being sick of a thing a dislike of it, getting rid of or
// selling "the" thing ends it by its noun, a birthday clause without the
// user as subject and a subjectless "turned" give the age, "is called"
// names the partner, "cut out" or a subjectless "stopped the …" ends a
// habit, and "I've got" says "has" as "I have" does.
func TestHeuristic_ChangesInOtherWords(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I started at Amazon as a data analyst last month.", []want{w("User started at Amazon as a data analyst last month.", "slot=job")}},
		{"I have a new job at Bosch.", []want{w("User has a new job at Bosch.", "slot=employer")}},
		{"I went off sushi.", []want{w("User went off sushi.", "object=sushi", "negated")}},
		{"I'm sick of podcasts.", []want{w("User is sick of podcasts.", "object=podcasts", "negated")}},
		{"I got rid of the kayak.", []want{w("User got rid of the kayak.", "object=kayak", "retract"), w("User got rid of the kayak.", "object=get rid of the kayak")}},
		{"It was my 30th birthday last week.", []want{w("User turned 30 last week.", "slot=age")}},
		{"I celebrated my 38th birthday yesterday.", []want{w("User celebrated their 38th birthday yesterday.", "slot=age")}},
		{"Just turned 53!", []want{w("User just turned 53.", "slot=age")}},
		{"My girlfriend is called Sofia.", []want{w("User's girlfriend is called Sofia.", "slot=name-of:girlfriend")}},
		{"Cut out coffee completely as of March.", []want{
			w("User cut out coffee completely as of March.", "object=coffee", "retract"),
			w("User cut out coffee completely as of March.", "object=cut out coffee completely as of march")}},
		{"Stopped the keto diet, too hard.", []want{
			w("User stopped the keto diet.", "object=keto diet", "retract"),
			w("User stopped the keto diet.", "object=stop the keto diet")}},
		{"yep, I've got a parrot named Kiwi", []want{w("User has a parrot named Kiwi.", "object=parrot kiwi")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestHeuristic_Clauses: how sentences are cut into clauses: lists of
// verb phrases share their subject, "he"/"she" continue a clause about
// someone in the user's life, an afterthought after a comma ends a clause,
// a list of names after a noun is an apposition, a time clause dates its
// clause.
func TestHeuristic_Clauses(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I grew up in Texas, went to college in Boston, and now I live in Seattle.", []want{
			w("User grew up in Texas.", "object=grow up in texas"),
			w("User went to college in Boston.", "object=go to college in boston"),
			w("User lives in Seattle.", "slot=residence")}},
		{"My wife's name is Julia and she's a dentist.", []want{
			w("User's wife's name is Julia.", "slot=name-of:wife"),
			w("User's wife Julia is a dentist.", "object=wife julia: be a dentist")}},
		{"I wear glasses, -4 in both eyes.", []want{w("User wears glasses.", "object=wear glasses")}},
		{"I live in Lisbon, Portugal.", []want{w("User lives in Lisbon, Portugal.", "slot=residence")}},
		{"I have two cats, Luna and Milo.", []want{w("User has two cats, Luna and Milo.", "object=cats luna")}},
		{"I speak Portuguese and a bit of Spanish.", []want{
			w("User speaks Portuguese.", "object=portuguese"), w("User speaks a bit of Spanish.", "object=bit of spanish")}},
		{"I've been playing tennis since I was 8.", []want{w("User has been playing tennis since they were 8.", "object=play tennis since i was 8")}},
		{"Me and my wife Sara run a B&B in Galway.", []want{w("User and their wife Sara run a B&B in Galway.", "object=run a b&b in galway")}},
		{"I'm originally from Kyiv but I've lived in Warsaw for 8 years.", []want{
			w("User is originally from Kyiv.", "slot=origin"), w("User has lived in Warsaw for 8 years.", "slot=residence")}},
		{"I don't live in Porto anymore, I moved to Lisbon.", []want{
			w("User does not live in Porto anymore.", "slot=residence", "object=porto", "negated", "retract"),
			w("User moved to Lisbon.", "slot=residence")}},
		{"Hi, I'm Maya.", []want{w("User's name is Maya.", "slot=name")}},
		// A time that leads the sentence dates its clause.
		{"Yesterday I passed my driving test.", []want{w("User passed their driving test yesterday.", "object=driving test", "retract"), w("User passed their driving test yesterday.", "object=pass my driving test")}},
		{"Two days ago, my sister Ana moved to Rome.", []want{w("User's sister Ana moved to Rome two days ago.", "object=sister ana: move to rome")}},
		{"On Sundays I go swimming with my dad.", []want{w("User goes swimming with their dad on Sundays.", "object=go swimming with my dad")}},
		{"In 2015 I ran my first marathon.", []want{w("User ran their first marathon in 2015.", "object=run my first marathon")}},
		{"Next year I'm starting a PhD in Berlin.", []want{w("User is starting a PhD in Berlin next year.", "object=start a phd in berlin")}},
		// Chat drops the "I".
		{"broke my wrist skiing in february", []want{w("User broke their wrist skiing in February.", "object=break my wrist skiing in february")}},
		{"love gardening and baking bread", []want{w("User loves gardening.", "object=gardening"), w("User loves baking bread.", "object=baking bread")}},
		{"just got back from Japan", []want{w("User just got back from Japan.", "object=get back from japan")}},
		{"been vegan since 2020", []want{w("User has been vegan since 2020.", "slot=diet")}},
		{"Loved the movie.", []want{w("User loved the movie.", "object=movie")}},
		// A list after "I'm" describes the user, item by item.
		{"I'm Sam, 27, a UX designer in Dublin.", []want{
			w("User's name is Sam.", "slot=name"), w("User is 27.", "slot=age"), w("User is a UX designer in Dublin.", "slot=job")}},
		{"I'm 42, divorced, two kids.", []want{
			w("User is 42.", "slot=age"), w("User is divorced.", "slot=marital-status"), w("User has two kids.", "slot=number-of:kids")}},
		{"retired teacher here, 68, love gardening", []want{
			w("User is a retired teacher.", "slot=job"), w("User is 68.", "slot=age"), w("User loves gardening.", "object=gardening")}},
		{"I'm from Lisbon, Portugal.", []want{w("User is from Lisbon, Portugal.", "slot=origin")}},
		{"handed in my notice at the bank last week", []want{w("User handed in their notice at the bank last week.", "object=handed in my notice at the bank last week")}},
		{"born and raised in Glasgow", []want{w("User was born and raised in Glasgow.", "slot=birthplace")}},
		{"I was born and raised in Glasgow.", []want{w("User was born and raised in Glasgow.", "slot=birthplace")}},
		{"planning to move to Spain", []want{w("User is planning to move to Spain.", "object=plan to move to spain")}},
		{"big fan of bluegrass", []want{w("User is a big fan of bluegrass.", "object=be a big fan of bluegrass")}},
		{"cut out sugar in January", []want{
			w("User cut out sugar in January.", "object=sugar", "retract"),
			w("User cut out sugar in January.", "object=cut out sugar in january")}},
		{"I'm seeing a therapist for anxiety.", []want{w("User is seeing a therapist for anxiety.", "object=see a therapist for anxiety")}},
		// Emoji are not words of a memory, and never cut in half.
		{"I live in Lisbon 😊 and I love it", []want{w("User lives in Lisbon.", "slot=residence")}},
		{"chris and i broke up last week 💔", []want{
			w("User and Chris broke up last week.", "slot=name-of:girlfriend", "object=chris", "retract"), w("User and Chris broke up last week.", "slot=name-of:boyfriend", "object=chris", "retract"),
			w("User and Chris broke up last week.", "slot=name-of:partner", "object=chris", "retract"), w("User and Chris broke up last week.", "slot=name-of:fiance", "object=chris", "retract"),
			w("User and Chris broke up last week.", "slot=name-of:fiancee", "object=chris", "retract"),
			w("User and Chris broke up last week.", "object=break up last week")}},
		{"started eating fish again so pescatarian now i guess", []want{
			w("User started eating fish again.", "slot=diet"), w("User is pescatarian now.", "slot=diet")}},
		{"veggie for 10 years now", []want{w("User has been vegetarian for 10 years now.", "slot=diet")}},
		{"Lisbon is home now", []want{w("User lives in Lisbon now.", "slot=residence")}},
		{"home's Dublin for now", []want{w("User lives in Dublin for now.", "slot=residence")}},
		{"Porto isn't home anymore", []want{w("User does not live in Porto anymore.", "slot=residence", "object=porto", "negated", "retract")}},
		{"live in Leeds atm", []want{w("User lives in Leeds now.", "slot=residence")}},
		{"I'm doing my PhD at Oxford", []want{w("User is doing their PhD at Oxford.", "slot=study")}},
		{"came off the pill last month", []want{w("User came off the pill last month.", "object=pill", "retract"), w("User came off the pill last month.", "object=come off the pill last month")}},
		// "there" points back to the place of an earlier clause.
		{"We moved to New York in 2019 and my kids go to school there.", []want{
			w("User moved to New York in 2019.", "slot=residence"), w("User's kids go to school in New York.", "object=kids: go to school in new york")}},
		{"I went to Paris and there were crowds.", []want{w("User went to Paris.", "object=go to paris")}},
		// Possessive chains, favourites and passions.
		{"My brother's wife is a doctor.", []want{w("User's brother's wife is a doctor.", "object=brother's wife: be a doctor")}},
		{"My sister's a doctor.", []want{w("User's sister is a doctor.", "object=sister: be a doctor")}},
		{"The Remains of the Day is my all-time favourite novel.", []want{w("User's all-time favourite novel is The Remains of the Day.", "slot=favourite:novel")}},
		{"My favourite book is Dune.", []want{w("User's favourite book is Dune.", "slot=favourite:book")}},
		{"my fav season is autumn", []want{w("User's favorite season is autumn.", "slot=favourite:season")}},
		{"spicy food is my thing, the hotter the better", []want{w("User loves spicy food.", "object=spicy food")}},
		{"I have two kids, Mia (9) and Noah (6), and we live near Utrecht.", []want{
			w("User has two kids, Mia 9 and Noah 6.", "object=kids mia"), w("User lives near Utrecht.", "object=live near utrecht")}},
		// A comment (", which …") is not part of the fact; a frequency
		// after a comma continues the user's clause.
		{"I live in Porto, which I love, and I work as a nurse.", []want{w("User lives in Porto.", "slot=residence"), w("User works as a nurse.", "slot=job")}},
		{"I've had insomnia for years, usually can't fall asleep before 3am", []want{
			w("User has had insomnia for years.", "object=have insomnia for years"), w("User usually cannot fall asleep before 3am.", "object=fall asleep before 3am", "negated")}},
		// Fragments of chat with no "I": relatives without "my", states,
		// counts, allergies, jobs and passions, habits that say how often,
		// and a fragment after a comma or "but" that is the user's again.
		{"mum passed away in 2019", []want{w("User's mum passed away in 2019.", "object=mum: pass away in 2019")}},
		{"dad's 81 and still plays golf every week", []want{
			w("User's dad is 81.", "slot=age-of:dad", "object=81"), w("User's dad still plays golf every week.", "object=dad: play golf every week")}},
		{"the dog needs eye drops every evening", []want{w("User's dog needs eye drops every evening.", "object=dog: need eye drops every evening")}},
		{"grandpa's been staying with us since March", []want{w("User's grandpa has been staying with them since March.", "object=grandpa: stay with us since march")}},
		{"volunteer at the animal shelter every saturday", []want{w("User volunteers at the animal shelter every Saturday.", "object=volunteer at the animal shelter every saturday")}},
		{"separated, two boys who live with me on weekends", []want{
			w("User is separated.", "slot=marital-status"), w("User has two boys.", "slot=number-of:boys"), w("User's boys live with them on weekends.", "object=boys: live with me on weekends")}},
		{"I have a husband who works away most weeks", []want{w("User has a husband.", "object=husband"), w("User's husband works away most weeks.", "object=husband: work away most weeks")}},
		{"I have a piano that belonged to my late mother", []want{w("User has a piano.", "object=have a piano")}},
		{"three dogs, Rex, Bella and Max", []want{w("User has three dogs, Rex, Bella and Max.", "object=dogs rex")}},
		{"mild shellfish allergy, nothing serious", []want{w("User has a mild shellfish allergy.", "object=have a mild shellfish allergy")}},
		{"pretty colourblind tbh", []want{w("User is pretty colourblind.", "object=be colourblind")}},
		{"not vegetarian anymore", []want{w("User is not vegetarian anymore.", "slot=diet", "object=vegetarian", "negated", "retract")}},
		{"semi-retired electrician, 64", []want{w("User is a semi-retired electrician.", "slot=job"), w("User is 64.", "slot=age")}},
		{"huge chess nerd", []want{w("User is a huge chess nerd.", "object=be a huge chess nerd")}},
		{"moved to Leeds in 2019, married, no kids", []want{
			w("User moved to Leeds in 2019.", "slot=residence"), w("User is married.", "slot=marital-status"), w("User has no kids.", "object=have kids")}},
		{"Priya here, 31, from Pune but working in London", []want{
			w("User's name is Priya.", "slot=name"), w("User is 31.", "slot=age"), w("User is from Pune.", "slot=origin"),
			w("User is working in London.", "slot=workplace", "object=london")}},
		{"learning Italian on Babbel", []want{w("User is learning Italian on Babbel.", "object=learn italian on babbel")}},
		{"I'm a plumber, licensed in Ohio.", []want{w("User is a plumber.", "slot=job"), w("User is licensed in Ohio.", "object=be licensed in ohio")}},
		{"diagnosed with asthma in May", []want{w("User was diagnosed with asthma in May.", "object=be diagnosed with asthma in may")}},
		{"moved here from Accra in 2015", []want{w("User moved here from Accra in 2015.", "object=move here from accra in 2015")}},
		{"knitting a scarf for my nephew", []want{w("User is knitting a scarf for their nephew.", "object=be knitting a scarf for my nephew")}},
		{"can't stand olives", []want{w("User cannot stand olives.", "object=olives", "negated")}},
		{"favourite film is Alien", []want{w("User's favourite film is Alien.", "slot=favourite:film")}},
		{"really into bouldering, mostly at weekends", []want{w("User is really into bouldering.", "object=be into bouldering")}},
		{"I'm an early bird, usually in bed by 10", []want{w("User is an early bird.", "object=be an early bird")}},
		{"never passed my driving test, no licence", []want{
			w("User never passed their driving test.", "object=pass my driving test", "negated"), w("User has no licence.", "object=have licence")}},
		{"I have one son", []want{w("User has one son.", "object=son")}},
		// A list introduced as being about the user.
		{"about me: 61, retired nurse, live near Cork, have a greyhound called Sid", []want{
			w("User is 61.", "slot=age"), w("User is a retired nurse.", "slot=job"), w("User lives near Cork.", "object=live near cork"),
			w("User has a greyhound called Sid.", "object=greyhound sid")}},
		{"me: 25, vegan, graphic designer, 2 cats", []want{
			w("User is 25.", "slot=age"), w("User is vegan.", "slot=diet"), w("User is a graphic designer.", "slot=job"), w("User has 2 cats.", "slot=number-of:cats")}},
		{"I'm Ana, 38, married with two kids", []want{
			w("User's name is Ana.", "slot=name"), w("User is 38.", "slot=age"), w("User is married.", "slot=marital-status"), w("User has two kids.", "slot=number-of:kids")}},
		{"contacts for sport, glasses for reading, pretty short-sighted", []want{w("User is pretty short-sighted.", "object=be short-sighted")}},
		{"spend summers in Crete", []want{w("User spends summers in Crete.", "object=spend summers in crete")}},
		{"wedding was in Sintra, 2016", []want{w("User's wedding was in Sintra in 2016.", "slot=date-of:wedding")}},
		{"Last year we moved to Porto and I started a new job at a bakery", []want{
			w("User moved to Porto last year.", "slot=residence"), w("User started a new job at a bakery last year.", "slot=employer")}},
		{"I'm 7 months pregnant", []want{w("User is 7 months pregnant.", "object=be 7 months pregnant")}},
		{"tore a ligament skiing in January", []want{w("User tore a ligament skiing in January.", "object=tear a ligament skiing in january")}},
		{"i keep chickens, 6 hens in the back garden", []want{
			w("User keeps chickens.", "object=keep chickens"), w("User has 6 hens in the back garden.", "object=have 6 hens in the back garden")}},
		{"drive an old Volvo", []want{w("User drives an old Volvo.", "object=drive an old volvo")}},
		{"surgery's booked for March 3", []want{w("User's surgery is booked for March 3.", "object=surgery: be booked for march 3")}},
		{"blood pressure's been high lately", []want{w("User's blood pressure has been high lately.", "object=blood pressure: be high lately")}},
		{"commute is 40 min by bus", []want{w("User's commute is 40 minutes by bus.", "object=commute: be 40 min by bus")}},
		{"I have coeliac disease so everything has to be gluten free", []want{w("User has coeliac disease.", "object=have coeliac disease")}},
		{"I'm vegan but eggs from my own hens are fine", []want{w("User is vegan.", "slot=diet")}},
		{"I work nights so I sleep in the day", []want{w("User works nights.", "object=work nights"), w("User sleeps in the day.", "object=sleep in the day")}},
		{"I've lost 5kg so far", []want{w("User has lost 5kg so far.", "object=lose 5kg so far")}},
		{"My boss, Karen, keeps moving meetings to Fridays.", []want{w("User's boss Karen keeps moving meetings to Fridays.", "object=boss karen: keep moving meetings to fridays")}},
		{"my twin brother Max and I share a flat", []want{w("User and their twin brother Max share a flat.", "object=twin brother max: share a flat")}},
		{"Since my divorce I live with my parents, for now", []want{w("User lives with their parents.", "object=live with my parents")}},
		{"After we married we moved to Leeds", []want{w("User moved to Leeds after they married.", "slot=residence")}},
		{"I went vegan in May, no more cheese", []want{w("User went vegan in May.", "slot=diet")}},
		{"I'm vegan and also a Buddhist", []want{w("User is vegan.", "slot=diet"), w("User is a Buddhist.", "object=be a buddhist")}},
		{"I go to the gym on Mondays and Wednesdays", []want{w("User goes to the gym on Mondays and Wednesdays.", "object=go to the gym on mondays and wednesdays")}},
		{"we live on the Leeds and Liverpool canal", []want{w("User lives on the Leeds and Liverpool canal.", "object=live on the leeds and liverpool canal")}},
		{"Cooking is my great joy", []want{w("User loves cooking.", "object=cooking")}},
		{"I love opera, especially Puccini", []want{w("User loves opera.", "object=opera")}},
		{"I was a miner for 30 years before I retired in 1990", []want{
			w("User was a miner for 30 years.", "object=be a miner for 30 years"),
			w("User retired in 1990.", "slot=employer", "retract"), w("User retired in 1990.", "slot=job")}},
		{"I want to visit Petra before I turn 50", []want{w("User wants to visit Petra before they turn 50.", "object=want to visit petra before i turn 50")}},
		{"my girl is 7 and crazy about horses", []want{w("User's girl is 7.", "object=girl: be 7"), w("User's girl is crazy about horses.", "object=girl: be crazy about horses")}},
		{"I'm a US citizen", []want{w("User is a US citizen.", "object=be a us citizen")}},
		{"I have a vegetable patch and an allotment with a shed", []want{
			w("User has a vegetable patch.", "object=have a vegetable patch"), w("User has an allotment with a shed.", "object=have an allotment with a shed")}},
		{"two kids, both at school", []want{w("User has two kids.", "slot=number-of:kids")}},
		{"never been to Japan", []want{w("User has never been to Japan.", "object=be to japan", "negated")}},
		{"Originally from Accra, now in Leeds", []want{w("User is originally from Accra.", "slot=origin"), w("User is now in Leeds.", "slot=residence")}},
		{"huge Celtic fan since I was a kid", []want{w("User has been a huge Celtic fan since they were a kid.", "object=be a huge celtic fan since i was a kid")}},
		{"had hip surgery in 2020 and it still hurts", []want{w("User had hip surgery in 2020.", "object=have hip surgery in 2020")}},
		{"we're hoping to move to York next year", []want{w("User is hoping to move to York next year.", "object=hope to move to york next year")}},
		{"still using an iPhone 8", []want{w("User is still using an iPhone 8.", "object=use an iphone 8")}},
		{"I have two kids (9 and 6)", []want{w("User has two kids 9 and 6.", "slot=number-of:kids")}},
		{"I work full time as an electrician", []want{w("User works full time as an electrician.", "slot=job")}},
		{"mum's a teacher and dad drives a taxi", []want{w("User's mum is a teacher.", "object=mum: be a teacher"), w("User's dad drives a taxi.", "object=dad: drive a taxi")}},
		{"freelance web designer, mostly shops and portfolios", []want{w("User is a freelance web designer.", "slot=job")}},
		{"I much prefer tea", []want{w("User much prefers tea.", "object=tea")}},
		{"I have a collie named Bess, she's 9", []want{w("User has a collie named Bess.", "object=collie bess"), w("User's collie Bess is 9.", "object=collie bess: be 9")}},
		{"I have a son, Jake, he's 4", []want{w("User has a son, Jake.", "object=son jake"), w("User's son Jake is 4.", "slot=age-of:son jake", "object=4")}},
		{"I married my wife Ana in 2010 and she is a doctor", []want{
			w("User married their wife Ana in 2010.", "object=marry my wife ana in 2010"), w("User's wife Ana is a doctor.", "object=wife ana: be a doctor")}},
		{"had to give up tennis because of my knee", []want{
			w("User gave up tennis because of their knee.", "object=tennis", "retract"), w("User gave up tennis because of their knee.", "object=give up tennis because of my knee")}},
		{"went back to eating meat last year", []want{w("User went back to eating meat last year.", "slot=diet")}},
		{"the divorce came through in May", []want{w("User's divorce came through in May.", "slot=marital-status")}},
		{"My doctor switched me from ramipril to losartan.", []want{
			w("User's doctor switched them from ramipril to losartan.", "object=ramipril", "retract"), w("User is on losartan.", "object=losartan")}},
		{"I'm 45, recently divorced, and I've just started dating again", []want{
			w("User is 45.", "slot=age"), w("User is recently divorced.", "slot=marital-status"), w("User has just started dating again.", "object=date")}},
		{"retired nurse, 67, on my own since my husband passed", []want{
			w("User is a retired nurse.", "slot=job"), w("User is 67, on their own.", "slot=age"), w("User's husband passed.", "object=husband: pass")}},
		{"our flat is right by the canal in Leeds", []want{w("User's flat is right by the canal in Leeds.", "object=flat: be right by the canal in leeds")}},
		{"PhD student in Bonn, originally Greek, cycle everywhere", []want{
			w("User is a phd student in Bonn.", "slot=job"), w("User is originally Greek.", "object=be greek"), w("User cycles everywhere.", "object=cycle everywhere")}},
		{"big Spurs fan, season ticket holder for 15 years", []want{
			w("User is a big Spurs fan.", "object=be a big spurs fan"), w("User has been a season ticket holder for 15 years.", "object=be a season ticket holder for 15 years")}},
		{"I've lived in 6 countries, currently Singapore", []want{
			w("User has lived in 6 countries.", "object=live in 6 countries"), w("User lives in Singapore.", "slot=residence")}},
		{"Call me Dave, everyone does. Full name's David Okafor.", []want{w("User goes by Dave.", "slot=nickname"), w("User's name is David Okafor.", "slot=name")}},
		{"since moving to Oslo in 2022 I've picked up skiing", []want{w("User moved to Oslo in 2022.", "slot=residence"), w("User has picked up skiing.", "object=pick up skiing")}},
		{"my kids' school is in Leeds", []want{w("User's kids' school is in Leeds.", "object=kids' school: be in leeds")}},
		{"Luna died this morning", []want{w("User's Luna died this morning.", "object=luna", "retract"), w("User's Luna died this morning.", "object=luna: die this morning")}},
		{"haven't had a drink in 100 days!", []want{
			w("User has not had a drink in 100 days.", "object=drink", "retract"), w("User has not had a drink in 100 days.", "object=have a drink in 100 days", "negated")}},
		{"graduated!", []want{
			w("User graduated.", "slot=job", "object=student", "retract"), w("User graduated.", "slot=study", "retract"), w("User graduated.", "object=graduate")}},
		{"forget what I said about the marathon", []want{w("User took back what they said about marathon.", "object=marathon", "retract")}},
		{"I don't actually have a dog", []want{w("User does not actually have a dog.", "object=dog", "negated", "retract")}},
		{"name: Kofi / age: 22 / from: Accra / studying: economics at Ashesi", []want{
			w("User's name is Kofi.", "slot=name"), w("User is 22.", "slot=age"), w("User is from Accra.", "slot=origin"), w("User is studying economics at Ashesi.", "slot=study")}},
		{"Name: Ana, age: 31, job: nurse", []want{w("User's name is Ana.", "slot=name"), w("User is 31.", "slot=age"), w("User is a nurse.", "slot=job")}},
		{"got 3 kids", []want{w("User has 3 kids.", "slot=number-of:kids")}},
		{"nurse.", []want{w("User is a nurse.", "slot=job")}},
		{"vegetarian.", []want{w("User is vegetarian.", "slot=diet")}},
		{"ENGAGED!!!", []want{w("User is engaged.", "slot=marital-status")}},
		{"on 50mg sertraline for anxiety, is it ok to drink on it?", []want{w("User is on 50mg sertraline for anxiety.", "object=be on 50mg sertraline for anxiety")}},
		{"high blood pressure, doc put me on amlodipine last month", []want{
			w("User has a high blood pressure.", "object=have a high blood pressure"), w("User is on amlodipine.", "object=amlodipine")}},
		{"I'm 27 - sorry, 28", []want{w("User is 27.", "slot=age"), w("User is 28.", "slot=age", "object=28")}},
		{"Myself Ramesh, working as civil engineer in Pune", []want{w("User's name is Ramesh.", "slot=name"), w("User is working as civil engineer in Pune.", "slot=job")}},
		{"Im autistic and phone calls are really hard for me", []want{w("User is autistic.", "object=be autistic")}},
		{"planning to move to Canada next year if the visa comes through", []want{w("User is planning to move to Canada next year.", "object=plan to move to canada next year")}},
		{"My son's bar mitzvah is in May", []want{w("User's son's bar mitzvah is in May.", "object=son's bar mitzvah: be in may")}},
		{"38, two kids, one dog, Leeds", []want{
			w("User is 38.", "slot=age"), w("User has two kids.", "slot=number-of:kids"), w("User has one dog.", "object=dog"), w("User lives in Leeds.", "slot=residence")}},
		{"about me: 35F, UX designer, run a lot", []want{w("User is 35.", "slot=age"), w("User is a ux designer.", "slot=job"), w("User runs a lot.", "object=run a lot")}},
		{"- have a 6yo named Arlo", []want{w("User has a 6yo named Arlo.", "object=6yo arlo")}},
		{"Bhai I am from Lucknow", []want{w("User is from Lucknow.", "slot=origin")}},
		{"my flight got cancelled and the airline won't rebook me", []want{w("User's flight got cancelled.", "object=flight: get cancelled")}},
		{"our basement flooded last night", []want{w("User's basement flooded last night.", "object=basement: flooded last night")}},
		{"my partner Sam is vegan so cooking for two is a puzzle", []want{w("User's partner Sam is vegan.", "object=partner sam: be vegan")}},
		{"we own a flat in Edinburgh that we rent out", []want{w("User owns a flat in Edinburgh.", "object=own a flat in edinburgh")}},
		{"I live in a flat in Glasgow with two flatmates", []want{
			w("User lives with two flatmates.", "object=live with two flatmates"), w("User lives in a flat in Glasgow.", "slot=residence")}},
		{"I live in Leeds with a view of the park", []want{w("User lives in Leeds with a view of the park.", "slot=residence")}},
		{"I don't eat pork or beef", []want{w("User does not eat pork.", "object=eat pork", "negated"), w("User does not eat beef.", "object=eat beef", "negated")}},
		{"dont like horror films, give me a romcom any day", []want{w("User does not like horror films.", "object=horror films", "negated")}},
		{"Doctor upped my citalopram to 30mg.", []want{
			w("User's doctor upped their citalopram to 30mg.", "object=citalopram", "retract"), w("User takes citalopram 30mg.", "object=citalopram")}},
		{"Weirdly I've come round to olives", []want{w("User likes olives.", "object=olives")}},
		{"We had to put Rex down on Friday.", []want{w("User put Rex down on Friday.", "object=rex", "retract"), w("User put Rex down on Friday.", "object=put rex down on friday")}},
		{"all moved in to the Leeds place now", []want{w("User all moved in to the Leeds place now.", "slot=residence")}},
		{"Sorry, I meant Galway - my sister lives in Galway, not Dublin.", []want{w("User meant Galway, not Dublin.", "object=galway", "corrects=Dublin")}},
		{"Allergies: shellfish, latex.", []want{w("User is allergic to shellfish.", "object=shellfish"), w("User is allergic to latex.", "object=latex")}},
		{"Meds: levothyroxine 100mcg, vitamin D", []want{w("User takes levothyroxine 100mcg.", "object=take levothyroxine 100mcg"), w("User takes vitamin D.", "object=take vitamin d")}},
		{"I'd rather take the train than fly", []want{w("User prefers to take the train than fly.", "object=to take the train than fly")}},
		{"Please keep answers short, I prefer bullet points.", []want{w("User prefers bullet points.", "object=bullet points")}},
		{"Had a hip replacement in 2021.", []want{w("User had a hip replacement in 2021.", "object=have a hip replacement in 2021")}},
		{"play guitar in a covers band", []want{w("User plays guitar in a covers band.", "object=play guitar in a covers band")}},
		{"omg i just got into the school netball team!!", []want{w("User just got into the school netball team.", "object=get into the school netball team")}},
		{"Reckon I'll head up to Cairns for the holidays", []want{w("User will head up to Cairns for the holidays.", "object=head up to cairns for the holidays")}},
		{"I'm 55, a bit overweight, and just signed up for a 10k", []want{
			w("User is 55.", "slot=age"), w("User is a bit overweight.", "object=be a bit overweight"), w("User just signed up for a 10k.", "object=signed up for a 10k")}},
		{"im 16 lol dont judge", []want{w("User is 16, dont judge.", "slot=age")}},
		{"I'm Deaf, BSL is my first language", []want{w("User is Deaf.", "object=be deaf"), w("User's first language is BSL.", "object=first language bsl")}},
		{"Our twins, Ava and Eli, turn three next month", []want{w("User's twins Ava and Eli turn three next month.", "object=twins ava and eli: turn three next month")}},
		{"based in Cebu City, been here since 2015", []want{w("User is based in Cebu City.", "slot=residence"), w("User has been in Cebu City since 2015.", "object=be in cebu city since 2015")}},
		{"I'm in a tiny flat in London", []want{w("User is in a tiny flat in London.", "slot=residence")}},
		{"Originally Lagos, but I've been in Manchester for six years", []want{
			w("User is originally from Lagos.", "slot=origin"), w("User has been in Manchester for six years.", "object=be in manchester for six years")}},
		{"Part time at Tesco, weekends", []want{w("User works part time at Tesco.", "slot=employer")}},
		{"I own a narrowboat, keep it on the Kennet and Avon", []want{
			w("User owns a narrowboat.", "object=own a narrowboat"), w("User keeps it on the Kennet and Avon.", "object=keep it on the kennet and avon")}},
		{"Hello sir I am from Chennai working in Dubai as site engineer", []want{
			w("User is from Chennai.", "slot=origin"), w("User is working in Dubai as site engineer.", "slot=workplace", "object=dubai")}},
		{"We moved the wedding to 20 September", []want{w("User's wedding is on 20 September.", "slot=date-of:wedding")}},
		{"Cancelled my gym membership, I don't go anymore", []want{w("User cancelled their gym membership.", "object=gym", "retract"), w("User cancelled their gym membership.", "object=cancel my gym membership")}},
		{"I have my driving test on Monday", []want{w("User has their driving test on Monday.", "object=have my driving test on monday")}},
		{"Bali's cancelled, couldn't get time off", []want{w("User cancelled Bali.", "object=bali", "retract")}},
		{"3 months smoke free today!!", []want{w("User has been smoke free for 3 months.", "object=smoke", "retract"), w("User has been smoke free for 3 months.", "object=smoke free")}},
		{"actually scratch that about sushi, I don't really like it", []want{w("User took back what they said about sushi.", "object=sushi", "retract")}},
		{"Correction — it's amoxicillin I'm allergic to, not penicillin", []want{w("User meant amoxicillin, not penicillin.", "object=amoxicillin", "corrects=penicillin")}},
		// Corrections of what was said before.
		{"sorry, I meant Braga, not Porto", []want{w("User meant Braga, not Porto.", "object=braga", "corrects=Porto")}},
		{"oops, I meant New York not Boston", []want{w("User meant New York, not Boston.", "object=new york", "corrects=Boston")}},
		{"typo, 31 not 13", []want{w("User meant 31, not 13.", "object=31", "corrects=13")}},
		{"oops, 28 actually", []want{w("User is 28.", "slot=age", "object=28")}},
		{"Sorry, I made a mistake earlier, I am 54, not 45.", []want{w("User is 54.", "slot=age")}},
		{"I'm in Bristol", []want{w("User is in Bristol.", "slot=residence")}},
		{"I'm in London this week", []want{w("User is in London this week.", "object=be in london this week")}},
		{"not doing keto anymore", []want{w("User is not doing keto anymore.", "object=do keto", "negated", "retract")}},
		{"I've started smoking again", []want{w("User has started smoking again.", "object=smoke")}},
		{"my GP took me off the statins", []want{w("User's GP took them off the statins.", "object=statins", "retract")}},
		{"the doc put me on ramipril 5mg", []want{w("User is on ramipril 5mg.", "object=ramipril 5mg")}},
		{"I smoke, about 10 a day", []want{w("User smokes, about 10 a day.", "object=smoke about 10 a day")}},
		{"just moved to Leeds, still unpacking", []want{w("User just moved to Leeds.", "slot=residence")}},
		// A question that leads with a statement about the user.
		{"I'm a diabetic, what can I eat for breakfast?", []want{w("User is a diabetic.", "object=be a diabetic")}},
		{"as a nurse working nights, how do I fix my sleep?", []want{w("User is a nurse.", "slot=job"), w("User is working nights.", "object=work nights")}},
		{"Given that I'm a vegan training for a marathon, how much protein do I need?", []want{
			w("User is a vegan.", "slot=diet"), w("User is training for a marathon.", "object=train for a marathon")}},
		{"sorry, typing with one hand, my son Noah won't nap", []want{w("User's son Noah won't nap.", "object=son noah: nap", "negated")}},
		{"I own a flat in Krakow that I rent out to students.", []want{w("User owns a flat in Krakow.", "object=own a flat in krakow")}},
		{"I'm studying law while working part time at a bakery", []want{
			w("User is studying law.", "slot=study"), w("User is working part time at a bakery.", "slot=employer")}},
		{"my daughter Zoe is 4, any ideas for her party?", []want{w("User's daughter Zoe is 4.", "slot=age-of:daughter zoe", "object=4")}},
		// Abbreviations of chat are written out.
		{"wfh on fridays", []want{w("User works from home on Fridays.", "object=work from home on fridays")}},
		{"i swim 4x a week", []want{w("User swims 4 times a week.", "object=swim 4x a week")}},
		{"we're getting the roof fixed in feb", []want{w("User is getting the roof fixed in February.", "object=get the roof fixed in feb")}},
		// After "but" or "so", someone else's clause is not glued to the user's.
		{"My name is Oluwaseun but everyone calls me Seun.", []want{w("User's name is Oluwaseun.", "slot=name"), w("User goes by Seun.", "slot=nickname")}},
		{"I have a bad knee so no running for me.", []want{w("User has a bad knee.", "object=have a bad knee")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

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

// TestHeuristic: the statements the regular-expression rules knew still
// become memories (written more faithfully where the issue said they were
// wrong: "works as nurse"), and the assistant's words are not the user's.
func TestHeuristic(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []string // the memories' texts
	}{
		{"My name is Alice and I live in Lisbon.", []string{"User's name is Alice.", "User lives in Lisbon."}},
		{"I'm 34 years old. I work as a nurse at the city hospital.", []string{"User is 34 years old.", "User works as a nurse at the city hospital."}},
		{"My dog's name is Rex", []string{"User's dog's name is Rex."}},
		{"I have two kids, and my wife is Maria.", []string{"User has two kids.", "User's wife is Maria."}},
		{"My favourite food is sushi!", []string{"User's favourite food is sushi."}},
		{"I don't like horror movies.", []string{"User does not like horror movies."}},
		{"I love hiking in the mountains", []string{"User loves hiking in the mountains."}},
		{"I'm planning to visit Japan next spring.", []string{"User is planning to visit Japan next spring."}},
		{"I am vegetarian.", []string{"User is vegetarian."}},
		{"I moved to Berlin last year", []string{"User moved to Berlin last year."}},
		{"Where do you live? What is my name?", nil}, // questions state nothing
		{"The weather is nice today.", nil},
		{"I'm 5 minutes late, sorry", nil},
	} {
		got := extract.Heuristic([]*agentmem.Message{{Seq: 7, Role: agentmem.RoleUser, Content: tt.say}})
		var texts []string
		for _, c := range got {
			texts = append(texts, c.Text)
			if c.SeqFrom != 7 || c.SeqTo != 7 || c.Category == "" || c.Confidence <= 0 {
				t.Errorf("%q: candidate %+v lacks provenance, category or confidence", tt.say, c)
			}
		}
		if !slices.Equal(texts, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q", tt.say, texts, tt.want)
		}
	}
	// The assistant's words are not the user's facts.
	if got := extract.Heuristic([]*agentmem.Message{{Role: agentmem.RoleAssistant, Content: "I live in the cloud."}}); len(got) != 0 {
		t.Errorf("assistant statement extracted: %+v", got)
	}
}

// FuzzHeuristic: no text makes Heuristic panic, and every memory it
// returns reads as a sentence about the user.
func FuzzHeuristic(f *testing.F) {
	for _, s := range []string{
		"I am vegetarian and my sister Ana lives in Porto.", "My brother, who lives in Oslo, is a doctor.",
		"my", "I", "I'm", "my ,", "and I", ", who", "my X, who", "When I, ", "I speak and", "I'm allergic to , and",
		"My dog's name", "my wife and I", "I have a daughter named", "We're", "I’m not vegetarian any more",
		"\xff\xfe I live in \x00", "I've", "I was born in", "Our son Leo just turned 5.",
		"I quit so ,", "I love it and , so", "me: 1, ,", "about me: ,", "dad's", "home's", "x is home", "veggie for",
		"divorced, ,", "no", "the dog", "live in", "Last year we , and I", "wfh", "3x", "I moved, 2018", "Tom is my",
		"noah already asked if 'the swim lesson man' is my friend lol", "she asked my mum if",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range extract.Heuristic([]*agentmem.Message{{Role: agentmem.RoleUser, Content: s}}) {
			if !strings.HasPrefix(c.Text, "User") || !strings.HasSuffix(c.Text, ".") {
				t.Fatalf("%q: memory %q does not read as a sentence about the user", s, c.Text)
			}
		}
	})
}

// TestHeuristic_Variants runs the extractor over every statement of the
// evaluation corpora with each word in turn dropped, and with a comma or
// a conjunction put before it: the clause readers index tokens around
// commas and conjunctions, and no such text may make them panic or
// return a memory that does not read as a sentence about the user.
func TestHeuristic_Variants(t *testing.T) {
	files, err := filepath.Glob("../eval/extraction/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpora: %v", err)
	}
	var texts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Statements []struct{ Text string }
			Changes    []struct{ Turns []string }
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range c.Statements {
			texts = append(texts, s.Text)
		}
		for _, ch := range c.Changes {
			texts = append(texts, ch.Turns...)
		}
	}
	check := func(s string) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%q: panic: %v", s, r)
			}
		}()
		for _, c := range extract.Heuristic([]*agentmem.Message{{Role: agentmem.RoleUser, Content: s}}) {
			if !strings.HasPrefix(c.Text, "User") || !strings.HasSuffix(c.Text, ".") {
				t.Fatalf("%q: memory %q does not read as a sentence about the user", s, c.Text)
			}
		}
	}
	n := 0
	for _, text := range texts {
		words := strings.Fields(text)
		for i := range words {
			for _, v := range [][]string{
				slices.Concat(words[:i], words[i+1:]),
				slices.Concat(words[:i], []string{","}, words[i:]),
				slices.Concat(words[:i], []string{"and"}, words[i:]),
				slices.Concat(words[:i], []string{"so"}, words[i:]),
				slices.Concat(words[:i], []string{"but", ","}, words[i:]),
				slices.Concat(words[:i], []string{":"}, words[i:]),
			} {
				check(strings.Join(v, " "))
				n++
			}
		}
	}
	t.Logf("%d texts, %d variants", len(texts), n)
}
