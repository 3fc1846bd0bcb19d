// Stage 6 of the extractor without a model, slot (see slot.go), for what
// is said of someone or something in the user's life.
//
// Takes a statement whose subject is not the user ("my sister Ana", "my
// dog Rex", "my wedding", "the doctor") and gives its candidate: any fact
// keeps whom it is about in its object ("User's sister Ana lives in
// Porto.": "sister ana: live in porto"), so that a fact of Ana's is not
// taken for the user's and an ending of Rex ends what was said of Rex;
// "my wife's name is Julia" fills the slot name-of:wife, "my daughter is
// 5" age-of:daughter, "my wedding is in June" date-of:wedding; "the doctor
// upped my citalopram to 30mg" is the user's new dose.

package extract

import (
	"strings"
)

// classifyOther classifies what is said of someone or something in the
// user's life ("my sister Ana", "my dog Rex", "my wedding", "my doctor"),
// or of the user's name ("my name is…"): a name, an age, a date, a dose,
// a death; any other fact keeps in its object whom it is about.
func classifyOther(out []Candidate, c Candidate, subj subject, lemma, verb string, comp, lc []string, progressive bool) []Candidate {
	first := ""
	if len(lc) > 0 {
		first = lc[0]
	}
	set := func(cat, slot string, conf, imp float64) {
		c.Category, c.Slot, c.Confidence, c.Importance = cat, slot, conf, imp
	}
	rel := subj.rel
	set("fact", "", 0.75, 0.6)
	if kin[lastWord(rel)] || pets[lastWord(rel)] {
		c.Category = "family"
		if pets[lastWord(rel)] {
			c.Category = "pet"
		}
	}
	// "My girlfriend is Sofia", "…is called Sofia", "…is named Sofia".
	name := comp
	if len(name) > 1 && (lc[0] == "called" || lc[0] == "named") {
		name = name[1:]
	}
	named := lemma == "be" && len(name) >= 1 && len(name) <= 3 && allCapitalized(name)
	switch {
	case (lemma == "be" && !progressive || lemma == "turn" && !progressive) && len(lc) > 0 && isNumber(first) && len(first) <= 3 && !c.Negated &&
		(len(lc) == 1 || strings.HasPrefix(lc[1], "year") || lc[1] == "now" || lc[1] == "today" || lc[1] == "yesterday" || lc[1] == "last" || lc[1] == "this" || lc[1] == "in") && (kin[lastWord(rel)] || pets[lastWord(rel)]):
		// "My daughter is 5", "my daughter turned 6 today": an age,
		// which a newer one replaces.
		who := rel
		if subj.name != "" {
			who += " " + strings.ToLower(subj.name)
		}
		c.Slot, c.Object = "age-of:"+who, first
	case (rel == "doctor" || rel == "doc" || rel == "gp" || rel == "consultant") && (lemma == "take" || lemma == "put" || lemma == "start") && len(lc) > 2 && lc[0] == "me" && (lc[1] == "off" || lc[1] == "on"):
		// "My doctor took me off the metformin", "the doc put me on
		// lisinopril 10mg", "the doctor started me on lisinopril": what
		// the user takes.
		drug := phrase(lc, 2)
		for _, a := range []string{"the ", "a ", "an ", "my "} {
			drug = strings.TrimPrefix(drug, a)
		}
		if lc[1] == "off" {
			return append(out, Candidate{Text: c.Text, Category: "health", Confidence: 0.8, Importance: 0.7, Object: lastWord(strings.Fields(drug + " x")[0]), Retract: true})
		}
		dt, n := comp[2:], len(strings.Fields(drug))
		switch {
		case len(dt) > 0 && (lower(dt[0]) == "the" || lower(dt[0]) == "my"):
			dt = dt[1:]
		case len(dt) > 0 && (lower(dt[0]) == "a" || lower(dt[0]) == "an"):
			n++ // "User is on a new diet."
		}
		return append(out, Candidate{Text: "User is on " + strings.Join(dt[:min(len(dt), n)], " ") + ".", Category: "health", Confidence: 0.8, Importance: 0.7, Object: drug})
	case rel == "name" && lemma == "be" && len(comp) > 0:
		set("identity", "name", 0.95, 0.9)
		c.Object = ""
	case (rel == "birthday" || rel == "birth date" || rel == "date of birth") && lemma == "be":
		set("identity", "birthday", 0.9, 0.7)
		c.Object = ""
	case (rel == "hometown" || rel == "home town") && lemma == "be":
		set("place", "origin", 0.85, 0.7)
		c.Object = ""
	case rel == "job" && lemma == "be":
		set("job", "job", 0.85, 0.8)
		c.Object = ""
	case events[rel] && lemma == "be" && (first == "in" || first == "on") && len(lc) > 1:
		// "My wedding is in June": the date of an event of the user's.
		set("plan", "date-of:"+rel, 0.85, 0.7)
		c.Object = ""
	case events[rel] && !c.Negated && index(lc, "to") >= 0 && (rescheduled[lemma] || (lemma == "be" || lemma == "get") && len(lc) > 0 && rescheduled[verbs[first]]):
		// "The wedding got moved to September": its new date.
		set("plan", "date-of:"+rel, 0.85, 0.7)
		c.Object = ""
		when := phrase(lc, index(lc, "to")+1)
		prep := "on "
		switch f := strings.Fields(when); {
		case len(f) > 0 && (f[0] == "next" || f[0] == "this" || f[0] == "tomorrow"):
			prep = ""
		case months[lastWord(when)] || isNumber(when) || len(f) > 0 && f[0] == "the":
			prep = "in "
		}
		c.Text = subj.text + " is " + prep + strings.Join(comp[index(lc, "to")+1:index(lc, "to")+1+len(strings.Fields(when))], " ") + "."
	case rel == "divorce" && !c.Negated && !progressive && (lemma == "be" || lemma == "come" || lemma == "go" || lemma == "get"):
		// "The divorce was finalised in March": no longer married.
		set("family", "marital-status", 0.85, 0.8)
		c.Object = ""
	case (rel == "doctor" || rel == "doc" || rel == "gp" || rel == "consultant") && (dose[lemma] || doseForms[lower(verb)]) && len(lc) > 3 && (lc[0] == "my" || lc[0] == "the") && index(lc, "to") > 1:
		// "Doctor upped my citalopram to 30mg": the new dose.
		to := index(lc, "to")
		drug := strings.Join(lc[1:to], " ")
		return append(out, Candidate{Text: c.Text, Category: "health", Confidence: 0.8, Importance: 0.7, Object: drug, Retract: true},
			Candidate{Text: "User takes " + strings.Join(comp[1:to], " ") + " " + strings.Join(comp[to+1:], " ") + ".", Category: "health", Confidence: 0.8, Importance: 0.7, Object: drug})
	case (rel == "doctor" || rel == "doc" || rel == "gp" || rel == "consultant") && (lemma == "switch" || lemma == "change" || lemma == "move") && index(lc, "from") >= 0 && index(lc, "to") > index(lc, "from"):
		// "My doctor switched me from metformin to insulin".
		from, to := index(lc, "from"), index(lc, "to")
		old, drug := strings.Join(lc[from+1:to], " "), phrase(lc, to+1)
		return append(out, Candidate{Text: c.Text, Category: "health", Confidence: 0.8, Importance: 0.7, Object: strings.TrimPrefix(old, "the "), Retract: true},
			Candidate{Text: "User is on " + strings.Join(comp[to+1:to+1+len(strings.Fields(drug))], " ") + ".", Category: "health", Confidence: 0.8, Importance: 0.7, Object: drug})
	case (lemma == "die" || lemma == "pass" && first == "away") && !c.Negated && !progressive && subj.name != "":
		// "My dog Rex died": the fact of Rex ends, the death is told.
		who := strings.TrimSpace(rel + " " + strings.ToLower(subj.name))
		out = append(out, Candidate{Text: c.Text, Category: categoryOf(rel), Confidence: 0.85, Importance: 0.8, Object: who, Retract: true})
		c.Category, c.Importance = categoryOf(rel), 0.8
		c.Object = who + ": " + c.Object
	case favouriteOf(rel) != "":
		set("preference", "favourite:"+favouriteOf(rel), 0.9, 0.6)
		c.Object = ""
	case strings.HasSuffix(rel, "'s name") || named && subj.name == "":
		r := strings.TrimSuffix(rel, "'s name")
		n := strings.ToLower(strings.Join(name, " "))
		c.Category, c.Confidence, c.Importance = categoryOf(r), 0.9, 0.8
		c.Object = r + " " + n
		if single[r] {
			c.Slot, c.Object = "name-of:"+r, ""
		}
	default:
		who := rel
		if subj.name != "" {
			who += " " + strings.ToLower(subj.name)
		}
		// The fact names the person ("User's sister Ana lives in
		// Porto."); its object keeps who it is about.
		c.Object = who + ": " + c.Object
	}
	return append(out, c)
}

// categoryOf is the category of a fact of a relation: "pet" for a pet,
// else "family".
func categoryOf(rel string) string {
	if pets[lastWord(rel)] {
		return "pet"
	}
	return "family"
}
