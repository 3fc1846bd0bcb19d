package extract_test

import "testing"

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

// TestHeuristic_Slots: what kind of fact a statement is (slot.go,
// slot_other.go): where the user lives and with whom, what they study and
// where they work, what the doctor prescribes, a pet put down, a date
// moved, a count of relatives, a habit started again.
func TestHeuristic_Slots(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"I'm doing my PhD at Oxford", []want{w("User is doing their PhD at Oxford.", "slot=study")}},
		{"I have one son", []want{w("User has one son.", "object=son")}},
		{"I work full time as an electrician", []want{w("User works full time as an electrician.", "slot=job")}},
		{"went back to eating meat last year", []want{w("User went back to eating meat last year.", "slot=diet")}},
		{"My doctor switched me from ramipril to losartan.", []want{
			w("User's doctor switched them from ramipril to losartan.", "object=ramipril", "retract"), w("User is on losartan.", "object=losartan")}},
		{"haven't had a drink in 100 days!", []want{
			w("User has not had a drink in 100 days.", "object=drink", "retract"), w("User has not had a drink in 100 days.", "object=have a drink in 100 days", "negated")}},
		{"I live in a flat in Glasgow with two flatmates", []want{
			w("User lives with two flatmates.", "object=live with two flatmates"), w("User lives in a flat in Glasgow.", "slot=residence")}},
		{"I live in Leeds with a view of the park", []want{w("User lives in Leeds with a view of the park.", "slot=residence")}},
		{"Doctor upped my citalopram to 30mg.", []want{
			w("User's doctor upped their citalopram to 30mg.", "object=citalopram", "retract"), w("User takes citalopram 30mg.", "object=citalopram")}},
		{"We had to put Rex down on Friday.", []want{w("User put Rex down on Friday.", "object=rex", "retract"), w("User put Rex down on Friday.", "object=put rex down on friday")}},
		{"all moved in to the Leeds place now", []want{w("User all moved in to the Leeds place now.", "slot=residence")}},
		{"I'm in a tiny flat in London", []want{w("User is in a tiny flat in London.", "slot=residence")}},
		{"We moved the wedding to 20 September", []want{w("User's wedding is on 20 September.", "slot=date-of:wedding")}},
		{"Cancelled my gym membership, I don't go anymore", []want{w("User cancelled their gym membership.", "object=gym", "retract"), w("User cancelled their gym membership.", "object=cancel my gym membership")}},
		{"I have my driving test on Monday", []want{w("User has their driving test on Monday.", "object=have my driving test on monday")}},
		{"I'm in Bristol", []want{w("User is in Bristol.", "slot=residence")}},
		{"I'm in London this week", []want{w("User is in London this week.", "object=be in london this week")}},
		{"I've started smoking again", []want{w("User has started smoking again.", "object=smoke")}},
		{"my GP took me off the statins", []want{w("User's GP took them off the statins.", "object=statins", "retract")}},
		{"the doc put me on ramipril 5mg", []want{w("User is on ramipril 5mg.", "object=ramipril 5mg")}},
		{"my GP started me on sertraline 50mg last week", []want{w("User is on sertraline 50mg.", "object=sertraline 50mg")}},
		{"The doctor started me on a new diet.", []want{w("User is on a new diet.", "object=new diet")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}
