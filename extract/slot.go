// Stage 6 of the extractor without a model (heuristic.go lists them),
// slot: what is said → what kind of fact it is.
//
// Takes a statement (said.go) and its memory's text (normalise.go); gives
// the candidate memory with its category (place, job, family, health…),
// its slot when the user has one value of it at a time (residence,
// employer, job, diet, age, name-of:wife: a new value replaces the old),
// its object when facts of the kind accumulate (languages, allergies,
// likes: "peanuts", "sister ana: live in porto"), and whether it ends a
// fact without a replacement (Retract: "I quit my job", "I sold my car"),
// as a candidate of its own beside the event where the event is worth
// keeping: classify. What is said of the people, pets and events of the
// user's life is classified in slot_other.go; the values a slot or an
// object takes are read in slot_values.go. Consolidation (consolidate.go)
// replaces, ends or keeps earlier memories by slot and object.

package extract

import (
	"slices"
	"strings"
)

// classify fills the candidate's category, slot, object, negation and
// retraction from what the clause says, and appends it (or, for a change
// that ends two facts, them).
func classify(out []Candidate, c Candidate, subj subject, lemma, verb string, comp []string, progressive, retract bool) []Candidate {
	if lemma == "be" {
		for len(comp) > 1 && (preAdverbs[lower(comp[0])] || intensifiers[lower(comp[0])]) && lower(comp[0]) != "no" && lower(comp[0]) != "a" {
			comp = comp[1:] // "I'm originally from Kyiv"
		}
	}
	if lemma == "come" && len(comp) > 2 && (lower(comp[0]) == "round" || lower(comp[0]) == "around") && lower(comp[1]) == "to" {
		lemma, comp = "like", comp[2:] // "I've come round to olives"
	}
	if lemma == "go" && len(comp) > 2 && lower(comp[0]) == "back" && lower(comp[1]) == "to" && strings.HasSuffix(lower(comp[2]), "ing") {
		lemma, comp = "start", comp[2:] // "went back to eating meat" starts eating it again
	}
	if lemma == "work" && len(comp) > 2 && (lower(comp[1]) == "time" || lower(comp[1]) == "days" || lower(comp[1]) == "nights") && (lower(comp[0]) == "full" || lower(comp[0]) == "part") {
		comp = comp[2:] // "I work full time as an electrician"
	} else if lemma == "work" && len(comp) > 1 && (lower(comp[0]) == "full-time" || lower(comp[0]) == "part-time" || lower(comp[0]) == "freelance") {
		comp = comp[1:]
	}
	lc := lowerAll(comp)
	first := ""
	if len(lc) > 0 {
		first = lc[0]
	}
	set := func(cat, slot string, conf, imp float64) {
		c.Category, c.Slot, c.Confidence, c.Importance = cat, slot, conf, imp
	}
	value := func(from int) string { return phrase(lc, from) }
	c.Object = objectOf(lemma, lc)

	if subj.kind == other {
		return classifyOther(out, c, subj, lemma, verb, comp, lc, progressive)
	}

	// endsJob retracts the employer, and the job when text is not ""
	// ("job") or the employer is named (employer: "google" ends "User is
	// a software engineer at Google." too).
	endsJob := func(text, employer string) []Candidate {
		r := c
		r.Retract, r.Category, r.Confidence, r.Importance, r.Object = true, "job", 0.85, 0.8, employer
		r.Slot = "employer"
		out = append(out, r)
		if text != "" || employer != "" {
			r.Slot = "job"
			out = append(out, r)
		}
		return out
	}

	switch {
	// Residence.
	case (lemma == "live" && first == "in" || lemma == "be" && first == "based" && len(lc) > 1 && lc[1] == "in") && !strings.Contains(verb, "used") &&
		!(len(lc) > 1 && isNumber(lc[1])) && // (but "I've lived in 6 countries")
		lower(verb) != "lived": // "I lived in Tokyo" is a past home, not the residence ("I've lived in Warsaw for 8 years" is)
		at := 1
		if first == "based" {
			at = 2
		}
		set("place", "residence", 0.9, 0.8)
		c.Object = value(at)
		if c.Negated {
			c.Retract = true
		}
		if w := strings.LastIndex(c.Text, " with "); w > 0 && !c.Negated && livesWith(c.Text[w+6:]) {
			// "I live in a flat in Glasgow with two flatmates": where,
			// and with whom.
			if in := strings.Index(c.Text, " in "); in > 0 && in < w {
				out = append(out, Candidate{Text: c.Text[:in] + " with " + c.Text[w+6:], Category: "family", Confidence: 0.8, Importance: 0.7,
					Object: "live with " + strings.ToLower(strings.TrimSuffix(c.Text[w+6:], "."))})
				c.Text = c.Text[:w] + "."
			}
		}
	case lemma == "be" && first == "in" && len(comp) > 1 && (capitalized(comp[1]) || len(lc) > 2 && (lc[1] == "a" || lc[1] == "an") && slices.ContainsFunc(lc[2:min(len(lc), 5)], func(w string) bool { return dwellings[w] })) && !progressive && !c.Negated && (verb == "am" || verb == "'m" || verb == "are" || verb == "'re" || lower(verb) == "i'm" || lower(verb) == "we're" || lower(verb) == "im") &&
		!slices.ContainsFunc(lc[2:], func(w string) bool {
			return visitWords[w] || timeUnits[strings.TrimSuffix(w, "s")] || weekdays[strings.TrimSuffix(w, "s")]
		}):
		// "I'm in Bristol", "we're in Minneapolis": where the user lives
		// ("I'm in London this week" is a visit).
		set("place", "residence", 0.8, 0.8)
		c.Object = value(1)
	case lemma == "move" && !progressive && !c.Negated && index(lc, "to") < 0 && (index(lc, "into") >= 0 || first == "in") && slices.ContainsFunc(comp, capitalized):
		// "all moved in to the Leeds place now", "moved into a flat in
		// Leeds": the residence.
		set("place", "residence", 0.85, 0.8)
	case rescheduled[lemma] && len(lc) > 3 && (first == "the" || first == "my" || first == "our") && events[lc[1]] && index(lc, "to") == 2 && !c.Negated:
		// "We moved the wedding to 20 September": its new date.
		set("plan", "date-of:"+lc[1], 0.85, 0.7)
		when := comp[3:]
		prep := "on "
		if months[lower(when[0])] || isYear(when[0]) || lower(when[0]) == "the" {
			prep = "in "
		} else if lower(when[0]) == "next" || lower(when[0]) == "this" {
			prep = ""
		}
		c.Text = "User's " + lc[1] + " is " + prep + strings.Join(when, " ") + "."
		c.Object = ""
	case (lemma == "move" || lemma == "relocate") && !progressive && !c.Negated && index(lc, "to") >= 0:
		set("place", "residence", 0.85, 0.8)
		c.Object = value(index(lc, "to") + 1)

	case (lemma == "move" || lemma == "relocate") && progressive:
		set("plan", "", 0.75, 0.7)

	// Work.
	case lemma == "teach" && index(lc, "at") > 0 && index(lc, "at")+1 < len(comp) && !c.Negated:
		// "I teach chemistry at Lincoln High": where the user works.
		set("job", "employer", 0.85, 0.7)
		c.Object = value(index(lc, "at") + 1)
	case lemma == "work" && (first == "at" || first == "for"):
		set("job", "employer", 0.85, 0.7)
		c.Object = value(1)
		if c.Negated {
			return endsJob("", "")
		}
	case lemma == "work" && first == "as":
		set("job", "job", 0.9, 0.8)
		c.Object = value(1)
		if c.Negated {
			c.Retract = true
		}
	case lemma == "work" && first == "in" && len(comp) > 1 && capitalized(comp[1]):
		set("job", "workplace", 0.8, 0.6)
		c.Object = value(1)
	case (lemma == "quit" || lemma == "leave" || lemma == "lose") && !progressive && len(lc) > 0 && (lc[len(lc)-1] == "job" || first == "my" && len(lc) > 1 && lc[1] == "job"):
		return endsJob("job", "")
	case (lemma == "quit" || lemma == "leave") && !progressive && len(comp) > 0 && capitalized(comp[0]) && !c.Negated:
		// The employer is the name: "I left Google to join Meta".
		n := 1
		for n < len(comp) && capitalized(comp[n]) {
			n++
		}
		return endsJob("", strings.Join(lc[:n], " "))
	case lemma == "quit" && len(comp) == 0, lemma == "resign" && !progressive,
		lemma == "be" && (first == "unemployed" || first == "jobless") && !c.Negated,
		(lemma == "be" || lemma == "get") && (first == "fired" || first == "laid" || first == "let"):
		return endsJob("job", "")
	case (lemma == "retire" || lemma == "be" && first == "retired") && !progressive && !c.Negated:
		set("job", "job", 0.85, 0.8)
		c.Object = "retired"
		r := c
		r.Retract, r.Slot, r.Object = true, "employer", ""
		out = append(out, r)
	case (lemma == "get" || lemma == "start" || lemma == "land" || lemma == "have" && index(lc, "new") >= 0) && (index(lc, "job") >= 0 || index(lc, "position") >= 0) && !c.Negated:
		if i := index(lc, "at"); i > 0 {
			set("job", "employer", 0.85, 0.7)
			c.Object = value(i + 1)
		} else if i := index(lc, "as"); i > 0 {
			set("job", "job", 0.85, 0.8)
			c.Object = value(i + 1)
		} else {
			set("job", "", 0.75, 0.6)
		}
	case lemma == "start" && len(lc) > 1 && lc[0] == "working" && (lc[1] == "at" || lc[1] == "for"):
		set("job", "employer", 0.85, 0.7)
		c.Object = value(2)
	case newEmployer(lemma, comp) && !c.Negated && !progressive:
		// "I started at Amazon as a data analyst", "I joined Deloitte as
		// a consultant": a job at an employer, which ends the job at
		// another (see Consolidator.decide).
		set("job", "employer", 0.85, 0.7)
		if index(lc, "as") >= 0 {
			set("job", "job", 0.85, 0.8)
		}
	case (lemma == "get" || lemma == "be") && first == "promoted" && !c.Negated:
		// "I got promoted to senior developer": the new job.
		set("job", "job", 0.85, 0.8)
	case (lemma == "graduate" || (lemma == "finish" || lemma == "complete") && degree(lc)) && !c.Negated && !progressive && verb != "will" && verb != "'ll":
		// "I graduated from UCLA": no longer a student.
		set("event", "", 0.8, 0.7)
		out = append(out, Candidate{Text: c.Text, Category: "job", Confidence: 0.8, Importance: 0.7, Slot: "job", Object: "student", Retract: true},
			Candidate{Text: c.Text, Category: "job", Confidence: 0.8, Importance: 0.7, Slot: "study", Retract: true})
	case (lemma == "do" && degree(lc) || lemma == "study" && (progressive || verb == lemma || verb == s3(lemma))) && !c.Negated && verb != "will" && verb != "'ll":
		// "I'm doing my master's at UCL", "I study law in Leeds": what
		// the user studies now, until they graduate.
		set("job", "study", 0.85, 0.7)
	case lemma == "be" && jobPhrase(lc) && (lower(verb) == "was" || lower(verb) == "were") && !c.Negated:
		// "I was a civil engineer for 35 years": a past job, not the
		// current one.
		set("job", "", 0.8, 0.6)
	case lemma == "be" && jobPhrase(lc):
		set("job", "job", 0.85, 0.8)
		c.Object = value(0)
		if c.Negated {
			c.Retract = true
		}

	// The end of a habit or an activity: "I stopped playing tennis", "I
	// quit smoking", "I gave up coffee". The habit's memories end (their
	// object starts with the verb: "play tennis every sunday"); the
	// statement is kept as an event.
	// "We had to put Rex down": Rex died.
	case lemma == "put" && len(comp) > 1 && capitalized(comp[0]) && lc[1] == "down" && !c.Negated:
		out = append(out, Candidate{Text: c.Text, Category: "family", Confidence: 0.8, Importance: 0.8, Object: lc[0], Retract: true})
		set("event", "", 0.8, 0.8)
	// "I've started seeing someone": no longer single.
	case (lemma == "start" || lemma == "begin") && len(lc) > 1 && first == "seeing" && !c.Negated && subj.kind == self,
		lemma == "see" && progressive && first == "someone" && !c.Negated:
		set("family", "marital-status", 0.8, 0.8)
		c.Object = "dating"
	// "I've started drinking again": the habit is back, against "I don't
	// drink".
	case (lemma == "start" || lemma == "begin") && len(lc) > 0 && strings.HasSuffix(first, "ing") && verbs[first] != "" && !c.Negated && !progressive && subj.kind == self &&
		!(first == "eating" && len(lc) > 1 && meats[lc[1]]):
		set("activity", "", 0.75, 0.6)
		c.Object = verbs[first]
	// "I haven't smoked in three months": the habit has ended.
	case c.Negated && subj.kind == self && abstained(verb, lc) && lemma != "be" && (lemma != "have" || habitOfHave(lc) != ""):
		// ("I haven't had a drink in 100 days": drinking.)
		habit := lemma
		if lemma == "have" {
			habit = habitOfHave(lc)
		}
		out = append(out, Candidate{Text: c.Text, Category: "activity", Confidence: 0.75, Importance: 0.6, Object: habit, Retract: true})
		set("event", "", 0.75, 0.6)
	case endsHabit(lemma, lc) != "" && !c.Negated && !progressive && subj.kind == self:
		out = append(out, Candidate{Text: c.Text, Category: "activity", Confidence: 0.8, Importance: 0.6, Object: endsHabit(lemma, lc), Retract: true})
		set("event", "", 0.75, 0.6)
	// "I sold my Civic", "I sold the Vespa", "we gave away our piano",
	// "I got rid of the kayak": the possession ends, whatever the verb
	// of its memory (has, owns, drives, rides), by its noun.
	// The sale itself is kept as an event.
	case parted(lemma, lc) != "" && !c.Negated && !progressive:
		out = append(out, Candidate{Text: c.Text, Category: "possession", Confidence: 0.8, Importance: 0.6, Object: parted(lemma, lc), Retract: true})
		set("possession", "", 0.75, 0.6)
	// "We cancelled the Japan trip": the plan ends.
	case lemma == "cancel" && len(lc) > 2 && (first == "my" || first == "the" || first == "our") && memberships[lc[len(lc)-1]] && !c.Negated:
		// "Cancelled my gym membership": the gym habit ends.
		out = append(out, Candidate{Text: c.Text, Category: "activity", Confidence: 0.8, Importance: 0.6, Object: strings.Join(lc[1:len(lc)-1], " "), Retract: true})
		set("event", "", 0.75, 0.6)
	case (lemma == "cancel" || lemma == "call" && first == "off") && !c.Negated && !progressive && len(comp) > 0:
		return append(out, Candidate{Text: c.Text, Category: "plan", Confidence: 0.8, Importance: 0.6, Object: planOf(comp), Retract: true})
	// "Passed my driving test": the test that was planned has happened.
	case (lemma == "pass" || lemma == "fail" || lemma == "finish" || lemma == "sit") && !progressive && !c.Negated && len(lc) > 1 && (first == "my" || first == "the") && tests[lc[len(lc)-1]]:
		out = append(out, Candidate{Text: c.Text, Category: "plan", Confidence: 0.8, Importance: 0.6, Object: strings.Join(lc[1:], " "), Retract: true})
		set("event", "", 0.8, 0.7)
	// "I have my driving test on Monday": a plan.
	case lemma == "have" && len(lc) > 2 && (first == "my" || first == "a" || first == "an") && slices.ContainsFunc(lc[1:min(len(lc), 4)], func(w string) bool { return tests[w] || events[w] }) && !c.Negated && verb != "had":
		set("plan", "", 0.8, 0.7)
	// "I broke up with Lena", "Lena and I broke up".
	case (lemma == "break" || lemma == "split") && first == "up" && !c.Negated && !progressive:
		name := subj.name
		if i := index(lc, "with"); i > 0 && i+1 < len(comp) && capitalized(comp[i+1]) {
			name = comp[i+1]
		}
		for _, r := range []string{"girlfriend", "boyfriend", "partner", "fiance", "fiancee"} {
			out = append(out, Candidate{Text: c.Text, Category: "family", Confidence: 0.8, Importance: 0.7, Slot: "name-of:" + r, Object: strings.ToLower(name), Retract: true})
		}
		set("family", "", 0.8, 0.7) // the break-up itself is kept as an event

	// Diet and health.
	case lemma == "be" && dietWord(lc) != "" || (lemma == "go" || lemma == "become" || lemma == "turn") && dietWord(lc) != "":
		set("preference", "diet", 0.9, 0.8)
		c.Object = dietWord(lc)
		if c.Negated {
			c.Retract = true
		}
	case lemma == "eat" && len(lc) > 0 && slices.ContainsFunc(lc[:min(len(lc), 5)], func(w string) bool { return dietMeats[w] }) && !(c.Negated && retract):
		// "I eat meat now" replaces "I don't eat meat": both the diet.
		set("preference", "diet", 0.85, 0.7)
		c.Object = "eats " + first
	case (lemma == "start" || lemma == "begin") && len(lc) > 1 && lc[0] == "eating" && meats[lc[1]] && !c.Negated:
		set("preference", "diet", 0.85, 0.7)
		c.Object = "eats " + lc[1]
	case lemma == "be" && first == "allergic":
		set("health", "", 0.9, 0.9)
		c.Object = value(index(lc, "to") + 1)
	case lemma == "be" && len(lc) > 1 && lc[1] == "intolerant":
		set("health", "", 0.9, 0.8)
		c.Object = first
	case (lemma == "eat" || lemma == "have" || lemma == "drink" || lemma == "tolerate") && verb != lemma && c.Negated && (verb == "can't" || verb == "cannot" || verb == "cant" || verb == "can"):
		set("health", "", 0.85, 0.8)
		c.Object = value(0)

	// Languages.
	case lemma == "speak" && len(comp) > 0:
		set("language", "", 0.9, 0.6)
		c.Object = value(0)
	case lemma == "be" && first == "fluent" && index(lc, "in") > 0:
		set("language", "", 0.9, 0.6)
		c.Object = value(index(lc, "in") + 1)

	// Identity.
	case birthdayAge(lc) != "" && (lemma == "celebrate" || lemma == "have") && past[verb] && !c.Negated:
		// "I celebrated my 38th birthday yesterday": the age.
		set("identity", "age", 0.85, 0.7)
	case lemma == "be" && len(lc) > 0 && isNumber(first) && !(len(lc) > 2 && (statuses[lc[2]] || states[lc[2]])):
		set("identity", "age", 0.9, 0.7)
		c.Object = first
	case lemma == "turn" && len(lc) > 0 && isNumber(first) && !progressive:
		set("identity", "age", 0.85, 0.7)
		c.Object = first
	case lemma == "be" && verb == "am" && len(comp) == 1 && capitalized(comp[0]) && !nationality(lc[0]) && !states[lc[0]] && !statuses[lc[0]] && !diets[lc[0]]:
		// "I'm Maya."
		set("identity", "name", 0.85, 0.9)
		c.Text = "User's name is " + comp[0] + "."
		c.Object = ""
	case lemma == "call" && first == "me", lemma == "go" && first == "by":
		set("identity", "name", 0.9, 0.9)
		c.Object = ""
	case lemma == "be" && first == "from":
		set("place", "origin", 0.9, 0.7)
		c.Object = value(1)
	case lemma == "be" && (first == "born" || strings.HasPrefix(first, "born and ")):
		if len(comp) > 2 && (lc[1] == "in" || lc[1] == "at") && capitalized(comp[2]) && !months[lc[2]] {
			set("identity", "birthplace", 0.9, 0.7)
			c.Object = value(2)
		} else {
			set("identity", "birthday", 0.9, 0.7)
			c.Object = value(1)
		}
	case (lemma == "be" || lemma == "get") && maritalStatus[first]:
		set("family", "marital-status", 0.85, 0.8)
		c.Object = first
		if c.Negated {
			c.Retract = true
		}
		if (first == "married" || first == "engaged") && subj.name != "" && !c.Negated {
			// "Chloe and I got married": no longer the girlfriend.
			rels := []string{"girlfriend", "boyfriend"}
			if first == "married" {
				rels = append(rels, "fiance", "fiancee")
			}
			for _, r := range rels {
				out = append(out, Candidate{Text: c.Text, Category: "family", Confidence: 0.8, Importance: 0.7, Slot: "name-of:" + r, Object: strings.ToLower(subj.name), Retract: true})
			}
		}
		if (first == "divorced" || first == "separated") && subj.name != "" && !c.Negated {
			// "Claire and I are divorced now": Claire is no longer the
			// wife, and what was said of her as the wife ends.
			for _, r := range []string{"wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee"} {
				out = append(out, Candidate{Text: c.Text, Category: "family", Confidence: 0.8, Importance: 0.7, Slot: "name-of:" + r, Object: strings.ToLower(subj.name), Retract: true})
			}
		}
	case lemma == "grow" && first == "up":
		set("place", "", 0.85, 0.7)

	// Family and pets.
	case lemma == "have" && haveRelation(lc) != "":
		set("family", "", 0.85, 0.8)
		r, n := haveRelation(lc), nameAfter(comp)
		if pets[r] {
			c.Category = "pet"
		}
		c.Object = r
		if n != "" {
			c.Object = r + " " + strings.ToLower(n)
		} else if len(lc) > 0 && isNumber(first) && first != "a" && first != "an" && first != "one" {
			c.Slot, c.Object = "number-of:"+r, ""
		}
	case lemma == "have" && nameAfter(comp) != "" && index(lc, "named")+index(lc, "called") > -2:
		// "We have a golden retriever named Max."
		set("family", "", 0.85, 0.8)
		at := index(lc, "named")
		if at < 0 {
			at = index(lc, "called")
		}
		c.Object = strings.ToLower(nameAfter(comp))
		if at > 0 {
			c.Object = lc[at-1] + " " + c.Object
		}
	case lemma == "be" && (first == "pregnant" || first == "expecting"), lemma == "expect" && progressive:
		set("family", "", 0.85, 0.8)

	// Preferences.
	case likes[lemma]:
		set("preference", "", 0.85, 0.6)
		c.Object = value(0)
		if dislikes[lemma] {
			c.Negated = true
		}
	case offPreference(lemma, lc) > 0 && !c.Negated:
		// "I've gone off oysters", "I'm sick of podcasts", "I can't stand
		// horror films": a dislike, the opposite of a like of the same
		// object.
		set("preference", "", 0.85, 0.6)
		c.Object, c.Negated = value(offPreference(lemma, lc)), true
	case lemma == "stand" && c.Negated && (verb == "can't" || verb == "cant" || verb == "cannot" || verb == "can") && len(lc) > 0:
		set("preference", "", 0.85, 0.6)
		c.Object = value(0)
	case lemma == "be" && len(lc) > 2 && (first == "into" || first == "interested" || lc[1] == "fan" || lc[1] == "big" && lc[2] == "fan"):
		set("preference", "", 0.8, 0.6)
		if first == "into" {
			// "I'm not into jazz anymore" ends "User loves jazz.": the
			// object is what the user is into.
			c.Object = value(1)
		}

	// Plans and what is under way.
	case plans[lemma] || progressive && (lemma == "go" || lemma == "plan" || lemma == "train" || lemma == "prepare" || lemma == "save" || lemma == "hope" || lemma == "think" || lemma == "consider") || verb == "will" || verb == "'ll":
		set("plan", "", 0.75, 0.6)
	case progressive:
		set("activity", "", 0.75, 0.6)
	case past[verb] || strings.HasSuffix(verb, "ed"):
		set("event", "", 0.75, 0.5)
	default:
		set("fact", "", 0.7, 0.5)
	}
	if c.Slot != "" && !c.Retract && c.Object != "" && c.Slot != "workplace" && !strings.HasPrefix(c.Slot, "number-of:") {
		// Slot facts replace by slot; the value is what changes.
		c.Object = ""
	}
	if subj.kind == household && subj.rel != "" && c.Slot == "" && c.Object != "" && !strings.Contains(c.Object, ": ") {
		// "My girlfriend Emma and I live together": a fact of Emma's too,
		// which a break-up with her ends.
		who := subj.rel
		if subj.name != "" {
			who += " " + strings.ToLower(subj.name)
		}
		c.Object = who + ": " + c.Object
	}
	if retract && !c.Retract && c.Negated && (c.Slot != "" || c.Object != "" && !likes[lemma]) && !(c.Slot == "" && (c.Object == "go" || c.Object == "do" || c.Object == "have" || c.Object == "get" || c.Object == "be")) {
		// "I don't have a car anymore" ends "User has a car.".
		c.Retract = true
	}
	return append(out, c)
}

// livesWith reports whether the rest of a memory after "with" names
// people or pets the user lives with: "two flatmates.", "their
// boyfriend and their dog Pepper.".
func livesWith(rest string) bool {
	for _, w := range strings.Fields(strings.ToLower(strings.TrimSuffix(rest, "."))) {
		if kin[w] || pets[w] || housemates[w] {
			return true
		}
	}
	return false
}

var housemates = set("flatmates flatmate roommates roommate housemates housemate family people friends")

// visitWords make "I'm in London" a visit: "this week", "today", "for a
// conference".
var visitWords = set("this next today tonight tomorrow visiting visit trip holiday vacation conference meeting until till")

// dwellings are the homes "I'm in a …" lives in.
var dwellings = set("flat apartment house studio bungalow cottage dorm condo bedsit maisonette townhouse caravan houseshare")

// memberships are what a user cancels to stop a habit: "my gym
// membership".
var memberships = set("membership subscription pass")

// tests are what a user sits and then passes or fails: "my driving test".
var tests = set("test exam exams interview audition assessment")

// dose are the verbs of a doctor changing a dose: "upped my citalopram
// to 30mg".
var (
	dose      = set("up raise increase lower reduce drop cut change bump")
	doseForms = set("upped bumped raised increased lowered reduced dropped changed")
)
