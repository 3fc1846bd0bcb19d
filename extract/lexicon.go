// Lexicon: the words every stage of the extractor without a model shares
// (heuristic.go lists the stages): verbs and their forms (verbs, past,
// pastTense), the people, pets and things of a life (kin, ownKin, pets,
// ownThings), jobs, diets, states and times, and the helpers on words
// each stage uses (lower, index, capitalized, isNumber, verbStart…). A
// list of words that one stage alone reads lives in that stage's file.

package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// set returns the words of a space-separated list as a set.
func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// lower lower-cases an ASCII word without allocating when it is already
// lower-case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			if l, ok := commonLower[s]; ok {
				return l // the capitalised words of most sentences, without an allocation
			}
			return strings.ToLower(s)
		}
	}
	return s
}

var commonLower = map[string]string{"I": "i", "I'm": "i'm", "I've": "i've", "I'll": "i'll", "I'd": "i'd", "My": "my",
	"We": "we", "We're": "we're", "We've": "we've", "Our": "our", "The": "the", "It": "it", "It's": "it's", "Im": "im",
	"And": "and", "But": "but", "So": "so", "Hi": "hi", "Yes": "yes", "No": "no", "What": "what", "Can": "can", "Do": "do"}

// lowerAll returns the words lower-cased.
func lowerAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = lower(t)
	}
	return out
}

// lowerFirst returns toks with the first word lower-cased, unless it is a
// name (a month, a weekday): a fronted time moves to the end of its clause.
func lowerFirst(toks []string) []string {
	out := slices.Clone(toks)
	if w := lower(out[0]); !months[w] && !weekdays[strings.TrimSuffix(w, "s")] {
		out[0] = w
	}
	return out
}

// capitalized reports whether s starts with a capital letter.
func capitalized(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// allCapitalized reports whether every word starts with a capital letter.
func allCapitalized(toks []string) bool {
	for _, t := range toks {
		if !capitalized(t) {
			return false
		}
	}
	return true
}

// isLetter reports whether b is an ASCII letter.
func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isWord reports whether w is a word of letters (and hyphens).
func isWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return w != ""
}

// isNumber reports whether w is a number in digits or one of numberWords.
func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return numberWords[w]
		}
	}
	return true
}

var numberWords = set("two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty ninety")

// isYear reports whether w is a year of the last two centuries: 1987,
// 2018.
func isYear(w string) bool {
	return len(w) == 4 && isNumber(w) && (w[:2] == "19" || w[:2] == "20")
}

// containsDigitByte reports whether w holds a digit: "50mg".
func containsDigitByte(w string) bool { return strings.ContainsAny(w, "0123456789") }

// lastWord returns the last word of a phrase.
func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// index returns the position of the first of toks that is w once
// lower-cased (w is lower-case), or -1.
func index(toks []string, w string) int {
	for i, t := range toks {
		if t == w || lower(t) == w {
			return i
		}
	}
	return -1
}

// lastIndex returns the position of the last of toks that is w, or -1.
func lastIndex(toks []string, w string) int {
	for i := len(toks) - 1; i >= 0; i-- {
		if toks[i] == w {
			return i
		}
	}
	return -1
}

// prepend returns a new slice: w, then toks.
func prepend(w string, toks []string) []string {
	return append([]string{w}, toks...)
}

// concat returns a new slice of the parts one after another.
func concat(parts ...[]string) []string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]string, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// verbStart reports whether w can start a predicate.
func verbStart(w string) bool {
	if auxiliaries[w] {
		return true
	}
	_, ok := verbs[w]
	return ok && !strings.HasSuffix(w, "ing")
}

var auxiliaries = set("am is are was were be been 's 're do does did don't doesn't didn't dont can can't cannot cant could couldn't will won't would wouldn't should shouldn't might may must has have had hasn't haven't hadn't isn't aren't wasn't weren't never also just still really recently finally usually always often no")

var determiners = set("my our your his her their the a an this that")

var stops = set("in at on for from to with by since until during before after about as")

var timeWords = set("last next this in on at ago yesterday today tomorrow soon recently since during every when until from")

var (
	weekdays  = set("monday tuesday wednesday thursday friday saturday sunday weekend weekday")
	timeUnits = set("day week month year weekend morning afternoon evening night summer winter spring fall autumn couple few while")
)

var (
	events      = set("bar bat mitzvah christening baptism divorce wedding party birthday appointment surgery operation interview exam trip vacation holiday honeymoon move concert graduation ceremony")
	rescheduled = set("move postpone reschedule push delay change")
	endVerbs    = set("stop quit ditch")
	habitNouns  = set("diet medication meds pills therapy treatment lessons classes habit routine subscription membership")
)

var (
	statuses = set("divorced married single widowed engaged separated retired unemployed pregnant vegan vegetarian sober")
	listKin  = set("kid child children son daughter cat dog pet grandkid grandchild grandchildren")
)

var (
	ownKin     = set("wife husband partner hubby missus fiance fiancee fiancé fiancée mum mom mam dad mother father sister brother son daughter grandma grandpa gran nan nana granny grandmother grandfather kids twins gf bf boyfriend girlfriend stepmom stepdad stepson stepdaughter in-laws")
	states     = set("asthmatic diabetic insulin-dependent epileptic autistic dyslexic short-sighted long-sighted shortsighted nearsighted farsighted colourblind colorblind deaf allergic lactose gluten-free coeliac celiac self-employed left-handed right-handed ambidextrous religious agnostic bilingual trilingual teetotal childless straight gay bi bisexual lesbian trans nonbinary non-binary introverted extroverted disabled")
	conditions = set("allergy allergies intolerance condition disorder syndrome disease pressure cholesterol asthma diabetes arthritis anxiety depression adhd migraines eczema psoriasis epilepsy")
	statives   = set("based located licensed qualified certified trained registered stationed settled employed interested involved obsessed addicted hooked")
	notName    = set("me you he she we they it this that everyone everybody someone somebody nobody mum mom dad family friends work school life him her them us")
	lacks      = set("licence license car tv phone smartphone siblings garden job degree insurance debt debts mortgage savings pension")
	ownThings  = set("doctor doc gp consultant commute rent mortgage salary job boss house flat apartment car bike phone laptop back knee knees shoulder hip cast cholesterol eyesight hearing sleep exam exams visa lease contract shift shifts degree thesis flight landlord garden surgery")
	owns       = set("drive own ride speak rent")
	meals      = set("lunch dinner breakfast brunch fun enough time")
	ingNouns   = set("morning evening nothing something anything everything wedding building meeting painting clothing feeling ending beginning setting wording thing spring string ceiling sibling pudding darling ring king during according")
	notPlaces  = set("here where what which who anywhere everywhere nowhere somewhere home work school")
	notCounts  = set("times things ways reasons options points ideas steps tips examples minutes seconds hours words sentences paragraphs lines versions answers replies")
	passions2  = set("nerd geek fan buff addict junkie enthusiast lover fanatic holder member supporter volunteer")
	requests   = set("write explain tell give show make find list summarize summarise translate check help compare draft suggest recommend generate create fix calculate convert describe define rewrite proofread edit review analyse analyze design code debug send remind add update delete remove set let get look try pick name count sort format plan book teach fill answer solve")
)

var (
	nationalities = set("german greek thai catholic muslim jewish hindu buddhist atheist christian cuban kenyan moroccan nepali filipino peruvian american")
	names         = set("ian brian julian adrian sebastian vivian lilian gillian damian fabian christian")
)

var fiction = set("story novel book game dream movie film play script character roleplay role-play")

var (
	passions   = set("thing jam passion obsession weakness pleasure joy hobby personality")
	especially = set("especially particularly mostly mainly")
	favourites = set("favorite favourite fav fave")
)

var (
	kin            = set("wife husband partner girlfriend boyfriend fiance fiancee fiancé fiancée spouse son daughter kid kids child children mother mom mum father dad parents parent brother sister brothers sisters sibling siblings cousin aunt uncle niece nephew grandmother grandma granny grandfather grandpa grandparents grandson granddaughter grandchildren grandkids friend friends boss manager coworker colleague roommate flatmate housemate neighbor neighbour stepson stepdaughter stepmom stepdad stepmother stepfather baby twin twins mother-in-law father-in-law in-laws sons daughters boys girls teammate mentor doctor therapist")
	single         = set("wife husband partner girlfriend boyfriend fiance fiancee fiancé fiancée spouse mother mom mum father dad boss")
	pets           = set("dog cat puppy kitten pet bird hamster rabbit horse fish parrot turtle snake guinea dogs cats pets")
	diets          = set("veggie vegetarian vegan pescatarian pescetarian keto plant-based carnivore flexitarian")
	dietMeats      = set("meat fish seafood") // what eating, or not, says of the diet ("I don't eat pork" does not)
	meats          = set("meat fish pork beef chicken seafood animal dairy lamb eggs")
	maritalStatus  = set("married single divorced engaged widowed separated")
	months         = set("january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec")
	likes          = set("like love enjoy prefer adore hate dislike")
	dislikes       = set("hate dislike")
	plans          = set("plan intend hope aim want")
	participles    = set("been done gone got gotten had made taken seen known lived worked moved started quit left lost become come grown born run eaten drunk spoken written driven flown swum sung ridden read put set hurt cut bought sold taught caught won spent built sent met found kept held felt told said thought brought begun")
	jobs           = set("nurse doctor teacher lawyer student chef pilot farmer firefighter dentist surgeon pharmacist accountant architect electrician plumber carpenter mechanic programmer writer author journalist editor artist painter musician photographer actor actress dancer singer waiter waitress bartender barista cashier clerk librarian professor lecturer tutor researcher scientist economist nanny cook baker butcher driver paramedic veterinarian vet therapist counselor counsellor psychologist psychiatrist entrepreneur freelancer contractor intern salesman saleswoman realtor banker broker trader secretary receptionist translator interpreter coach trainer soldier officer cop detective judge priest pastor engineer developer designer manager consultant analyst programmer ceo cto founder co-founder owner midwife caregiver carer housewife homemaker stay-at-home postman postwoman fireman firefighter policeman policewoman fisherman handyman cameraman repairman tradesman milkman binman dustman doorman foreman craftsman builder cleaner decorator gardener roofer welder joiner tiler courier porter miner labourer laborer carer hairdresser barber stylist florist optician surveyor solicitor barrister paralegal auditor bookkeeper sailor machinist chemist physicist biologist mathematician statistician nurse-practitioner physio physiotherapist dietitian nutritionist optometrist radiographer sonographer phlebotomist housekeeper janitor caretaker lifeguard instructor teaching-assistant ta postdoc lecturer dev sysadmin tester director supervisor coordinator administrator specialist technician advisor adviser executive dispatcher hygienist superintendent")
	trailingYears  = set("old")
	_              = trailingYears
	irregularForms = `be was been|have had had|do did done|go went gone|get got gotten|make made made|take took taken|come came come|see saw seen|know knew known|think thought thought|give gave given|find found found|tell told told|become became become|leave left left|feel felt felt|bring brought brought|begin began begun|keep kept kept|hold held held|write wrote written|stand stood stood|hear heard heard|let let let|mean meant meant|set set set|meet met met|run ran run|pay paid paid|sit sat sat|speak spoke spoken|lead led led|read read read|grow grew grown|lose lost lost|fall fell fallen|send sent sent|build built built|understand understood understood|break broke broken|spend spent spent|cut cut cut|drive drove driven|buy bought bought|wear wore worn|choose chose chosen|sell sold sold|teach taught taught|catch caught caught|win won won|eat ate eaten|drink drank drunk|fly flew flown|swim swam swum|sing sang sung|ride rode ridden|sleep slept slept|quit quit quit|put put put|hurt hurt hurt|forget forgot forgotten|say said said|fight fought fought|hit hit hit|throw threw thrown|wake woke woken|hang hung hung|bet bet bet|feed fed fed|lend lent lent|dig dug dug|seek sought sought|shoot shot shot|steal stole stolen|hide hid hidden|bite bit bitten|blow blew blown|forgive forgave forgiven|draw drew drawn|rise rose risen|split split split|shut shut shut|tear tore torn|freeze froze frozen|shake shook shaken|strike struck struck|bend bent bent|slide slid slid|spin spun spun|stick stuck stuck|swing swung swung|lay laid laid|bleed bled bled|sink sank sunk|ring rang rung|leap leapt leapt|deal dealt dealt|kneel knelt knelt|sew sewed sewn|mow mowed mown|weave wove woven|overcome overcame overcome|withdraw withdrew withdrawn|undergo underwent undergone`
	regularVerbs   = `ditch trade vape die pass live work move like love enjoy prefer hate dislike want need plan hope intend start stop finish play watch study learn cook bake visit travel join use try help call look listen talk walk own rent share relocate retire resign graduate marry divorce date adopt raise train practice practise volunteer smoke miss collect paint dance hike climb cycle bike ski surf fish garden knit sew code program design manage open close change switch return expect attend prepare save earn invest celebrate wait decide agree believe guess suppose wonder ask answer mention suggest recommend remember realize realise notice appreciate thank apologize apologise care mind struggle suffer recover stay commute belong follow support vote pray worship turn land adore claim insist argue complain doubt promise swear admit recall imagine kid joke ping check clarify confirm repeat explain seem sound tolerate aim consider reckon assume jog run shop drop chat regret commit refer fix clean vacuum host coach mentor lead teach tutor drive fly bike row box lift meditate lose gain weigh measure count sleep wake dream drink eat bring carry pick reach arrive leave head book cancel reserve order postpone reschedule delay push`
	doubled        = set("plan stop shop jog drop admit prefer chat regret commit refer travel")

	verbs       = map[string]string{} // form → lemma
	past        = map[string]bool{}
	pastOf      = map[string]string{} // lemma → simple past, of the irregular verbs
	thirdPerson = map[string]string{"have": "has", "be": "is", "do": "does", "go": "goes"}
)

func init() {
	for _, e := range strings.Split(irregularForms, "|") {
		f := strings.Fields(e)
		add(f[0], f[0])
		add(s3(f[0]), f[0])
		add(ing(f[0]), f[0])
		add(f[1], f[0])
		add(f[2], f[0])
		past[f[1]] = true
		pastOf[f[0]] = f[1]
	}
	for _, v := range strings.Fields(regularVerbs) {
		if _, ok := verbs[v]; ok && verbs[v] == v {
			continue
		}
		add(v, v)
		add(s3(v), v)
		add(ing(v), v)
		add(ed(v), v)
		past[ed(v)] = true
		if v == "travel" {
			add("traveled", v)
			add("traveling", v)
			past["traveled"] = true
		}
	}
	for _, w := range []string{"is", "am", "are", "was", "were", "been", "be", "has", "does", "had", "did"} {
		delete(verbs, w) // auxiliaries are handled on their own
	}
	verbs["has"], verbs["had"], verbs["have"], verbs["does"], verbs["did"] = "have", "have", "have", "do", "do"
	verbs["born"] = "bear"
	delete(verbs, "born") // "I was born" is a state, not a passive to lemmatise
	// British doubling of verbs that American English does not double.
	for _, v := range []string{"cancel", "travel", "label", "model", "fuel"} {
		add(v+"led", v)
		add(v+"ling", v)
		past[v+"led"] = true
	}
}

// add records form as a form of the verb lemma, unless it is already one
// of another verb.
func add(form, lemma string) {
	if _, ok := verbs[form]; !ok {
		verbs[form] = lemma
	}
}

// pastTense returns the simple past of a verb's lemma: "gave", "moved".
func pastTense(lemma string) string {
	if p := pastOf[lemma]; p != "" {
		return p
	}
	return ed(lemma)
}

// ed is the past tense of a regular verb: "moved", "tried", "stopped".
func ed(v string) string {
	switch {
	case strings.HasSuffix(v, "e"):
		return v + "d"
	case len(v) > 1 && strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		return v[:len(v)-1] + "ied"
	case doubled[v]:
		return v + v[len(v)-1:] + "ed"
	}
	return v + "ed"
}

// ing is the present participle of a verb: "moving", "lying", "running".
func ing(v string) string {
	switch {
	case v == "be" || v == "see" || v == "agree":
		return v + "ing"
	case strings.HasSuffix(v, "ie"):
		return v[:len(v)-2] + "ying"
	case strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee"):
		return v[:len(v)-1] + "ing"
	case doubled[v] || v == "run" || v == "swim" || v == "sit" || v == "get" || v == "put" || v == "cut" || v == "win" || v == "begin" || v == "quit" || v == "set" || v == "let" || v == "hit" || v == "shut" || v == "bet" || v == "dig" || v == "split":
		return v + v[len(v)-1:] + "ing"
	}
	return v + "ing"
}

// s3 is the third person singular of a regular verb.
func s3(w string) string {
	switch {
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "sh"), strings.HasSuffix(w, "ch"),
		strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"), strings.HasSuffix(w, "o"):
		return w + "es"
	case len(w) > 1 && strings.HasSuffix(w, "y") && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}
