package extract_test

import "testing"

// TestHeuristic_Fragments: chat that leaves the "I" out is the user's
// (fragment.go): relatives and things without "my", verbless states,
// counts, conditions, jobs and passions, habits that say how often, -ing
// activities, introductions ("Priya here, 31") and lists about the user.
func TestHeuristic_Fragments(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"retired teacher here, 68, love gardening", []want{
			w("User is a retired teacher.", "slot=job"), w("User is 68.", "slot=age"), w("User loves gardening.", "object=gardening")}},
		{"handed in my notice at the bank last week", []want{w("User handed in their notice at the bank last week.", "object=handed in my notice at the bank last week")}},
		{"born and raised in Glasgow", []want{w("User was born and raised in Glasgow.", "slot=birthplace")}},
		{"planning to move to Spain", []want{w("User is planning to move to Spain.", "object=plan to move to spain")}},
		{"big fan of bluegrass", []want{w("User is a big fan of bluegrass.", "object=be a big fan of bluegrass")}},
		{"cut out sugar in January", []want{
			w("User cut out sugar in January.", "object=sugar", "retract"),
			w("User cut out sugar in January.", "object=cut out sugar in january")}},
		{"veggie for 10 years now", []want{w("User has been vegetarian for 10 years now.", "slot=diet")}},
		{"Lisbon is home now", []want{w("User lives in Lisbon now.", "slot=residence")}},
		{"home's Dublin for now", []want{w("User lives in Dublin for now.", "slot=residence")}},
		{"Porto isn't home anymore", []want{w("User does not live in Porto anymore.", "slot=residence", "object=porto", "negated", "retract")}},
		{"live in Leeds atm", []want{w("User lives in Leeds now.", "slot=residence")}},
		{"came off the pill last month", []want{w("User came off the pill last month.", "object=pill", "retract"), w("User came off the pill last month.", "object=come off the pill last month")}},
		{"mum passed away in 2019", []want{w("User's mum passed away in 2019.", "object=mum: pass away in 2019")}},
		{"dad's 81 and still plays golf every week", []want{
			w("User's dad is 81.", "slot=age-of:dad", "object=81"), w("User's dad still plays golf every week.", "object=dad: play golf every week")}},
		{"the dog needs eye drops every evening", []want{w("User's dog needs eye drops every evening.", "object=dog: need eye drops every evening")}},
		{"grandpa's been staying with us since March", []want{w("User's grandpa has been staying with them since March.", "object=grandpa: stay with us since march")}},
		{"volunteer at the animal shelter every saturday", []want{w("User volunteers at the animal shelter every Saturday.", "object=volunteer at the animal shelter every saturday")}},
		{"separated, two boys who live with me on weekends", []want{
			w("User is separated.", "slot=marital-status"), w("User has two boys.", "slot=number-of:boys"), w("User's boys live with them on weekends.", "object=boys: live with me on weekends")}},
		{"three dogs, Rex, Bella and Max", []want{w("User has three dogs, Rex, Bella and Max.", "object=dogs rex")}},
		{"mild shellfish allergy, nothing serious", []want{w("User has a mild shellfish allergy.", "object=have a mild shellfish allergy")}},
		{"pretty colourblind tbh", []want{w("User is pretty colourblind.", "object=be colourblind")}},
		{"not vegetarian anymore", []want{w("User is not vegetarian anymore.", "slot=diet", "object=vegetarian", "negated", "retract")}},
		{"semi-retired electrician, 64", []want{w("User is a semi-retired electrician.", "slot=job"), w("User is 64.", "slot=age")}},
		{"huge chess nerd", []want{w("User is a huge chess nerd.", "object=be a huge chess nerd")}},
		{"Priya here, 31, from Pune but working in London", []want{
			w("User's name is Priya.", "slot=name"), w("User is 31.", "slot=age"), w("User is from Pune.", "slot=origin"),
			w("User is working in London.", "slot=workplace", "object=london")}},
		{"learning Italian on Babbel", []want{w("User is learning Italian on Babbel.", "object=learn italian on babbel")}},
		{"diagnosed with asthma in May", []want{w("User was diagnosed with asthma in May.", "object=be diagnosed with asthma in may")}},
		{"moved here from Accra in 2015", []want{w("User moved here from Accra in 2015.", "object=move here from accra in 2015")}},
		{"knitting a scarf for my nephew", []want{w("User is knitting a scarf for their nephew.", "object=be knitting a scarf for my nephew")}},
		{"can't stand olives", []want{w("User cannot stand olives.", "object=olives", "negated")}},
		{"favourite film is Alien", []want{w("User's favourite film is Alien.", "slot=favourite:film")}},
		{"really into bouldering, mostly at weekends", []want{w("User is really into bouldering.", "object=be into bouldering")}},
		{"never passed my driving test, no licence", []want{
			w("User never passed their driving test.", "object=pass my driving test", "negated"), w("User has no licence.", "object=have licence")}},
		{"about me: 61, retired nurse, live near Cork, have a greyhound called Sid", []want{
			w("User is 61.", "slot=age"), w("User is a retired nurse.", "slot=job"), w("User lives near Cork.", "object=live near cork"),
			w("User has a greyhound called Sid.", "object=greyhound sid")}},
		{"me: 25, vegan, graphic designer, 2 cats", []want{
			w("User is 25.", "slot=age"), w("User is vegan.", "slot=diet"), w("User is a graphic designer.", "slot=job"), w("User has 2 cats.", "slot=number-of:cats")}},
		{"contacts for sport, glasses for reading, pretty short-sighted", []want{w("User is pretty short-sighted.", "object=be short-sighted")}},
		{"spend summers in Crete", []want{w("User spends summers in Crete.", "object=spend summers in crete")}},
		{"tore a ligament skiing in January", []want{w("User tore a ligament skiing in January.", "object=tear a ligament skiing in january")}},
		{"drive an old Volvo", []want{w("User drives an old Volvo.", "object=drive an old volvo")}},
		{"surgery's booked for March 3", []want{w("User's surgery is booked for March 3.", "object=surgery: be booked for march 3")}},
		{"blood pressure's been high lately", []want{w("User's blood pressure has been high lately.", "object=blood pressure: be high lately")}},
		{"commute is 40 min by bus", []want{w("User's commute is 40 minutes by bus.", "object=commute: be 40 min by bus")}},
		{"two kids, both at school", []want{w("User has two kids.", "slot=number-of:kids")}},
		{"never been to Japan", []want{w("User has never been to Japan.", "object=be to japan", "negated")}},
		{"Originally from Accra, now in Leeds", []want{w("User is originally from Accra.", "slot=origin"), w("User is now in Leeds.", "slot=residence")}},
		{"huge Celtic fan since I was a kid", []want{w("User has been a huge Celtic fan since they were a kid.", "object=be a huge celtic fan since i was a kid")}},
		{"still using an iPhone 8", []want{w("User is still using an iPhone 8.", "object=use an iphone 8")}},
		{"had to give up tennis because of my knee", []want{
			w("User gave up tennis because of their knee.", "object=tennis", "retract"), w("User gave up tennis because of their knee.", "object=give up tennis because of my knee")}},
		{"the divorce came through in May", []want{w("User's divorce came through in May.", "slot=marital-status")}},
		{"retired nurse, 67, on my own since my husband passed", []want{
			w("User is a retired nurse.", "slot=job"), w("User is 67, on their own.", "slot=age"), w("User's husband passed.", "object=husband: pass")}},
		{"PhD student in Bonn, originally Greek, cycle everywhere", []want{
			w("User is a phd student in Bonn.", "slot=job"), w("User is originally Greek.", "object=be greek"), w("User cycles everywhere.", "object=cycle everywhere")}},
		{"big Spurs fan, season ticket holder for 15 years", []want{
			w("User is a big Spurs fan.", "object=be a big spurs fan"), w("User has been a season ticket holder for 15 years.", "object=be a season ticket holder for 15 years")}},
		{"got 3 kids", []want{w("User has 3 kids.", "slot=number-of:kids")}},
		{"high blood pressure, doc put me on amlodipine last month", []want{
			w("User has a high blood pressure.", "object=have a high blood pressure"), w("User is on amlodipine.", "object=amlodipine")}},
		{"Myself Ramesh, working as civil engineer in Pune", []want{w("User's name is Ramesh.", "slot=name"), w("User is working as civil engineer in Pune.", "slot=job")}},
		{"38, two kids, one dog, Leeds", []want{
			w("User is 38.", "slot=age"), w("User has two kids.", "slot=number-of:kids"), w("User has one dog.", "object=dog"), w("User lives in Leeds.", "slot=residence")}},
		{"about me: 35F, UX designer, run a lot", []want{w("User is 35.", "slot=age"), w("User is a ux designer.", "slot=job"), w("User runs a lot.", "object=run a lot")}},
		{"- have a 6yo named Arlo", []want{w("User has a 6yo named Arlo.", "object=6yo arlo")}},
		{"Had a hip replacement in 2021.", []want{w("User had a hip replacement in 2021.", "object=have a hip replacement in 2021")}},
		{"play guitar in a covers band", []want{w("User plays guitar in a covers band.", "object=play guitar in a covers band")}},
		{"Part time at Tesco, weekends", []want{w("User works part time at Tesco.", "slot=employer")}},
		{"Bali's cancelled, couldn't get time off", []want{w("User cancelled Bali.", "object=bali", "retract")}},
		{"not doing keto anymore", []want{w("User is not doing keto anymore.", "object=do keto", "negated", "retract")}},
		// Chat drops the "I".
		{"broke my wrist skiing in february", []want{w("User broke their wrist skiing in February.", "object=break my wrist skiing in february")}},
		{"love gardening and baking bread", []want{w("User loves gardening.", "object=gardening"), w("User loves baking bread.", "object=baking bread")}},
		{"just got back from Japan", []want{w("User just got back from Japan.", "object=get back from japan")}},
		{"been vegan since 2020", []want{w("User has been vegan since 2020.", "slot=diet")}},
		{"Loved the movie.", []want{w("User loved the movie.", "object=movie")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
