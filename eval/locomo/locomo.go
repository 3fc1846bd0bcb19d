// Package locomo measures how well agentmem finds the evidence of the
// LoCoMo benchmark's questions (Maharana et al., ACL 2024): it stores each
// conversation as a user with one thread per session, asks every question
// through a Searcher, maps the ranked hits back to LoCoMo's turn ids
// (dia_ids) and reports Recall@k, any-hit@k, MRR and the tokens retrieved,
// per question category.
//
// The data is licensed CC BY-NC 4.0 and is never part of this repository:
// the command reads it from wherever the operator keeps it (see
// shared/data/locomo/SOURCE.md), and the tests use a conversation written
// for them.
package locomo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Question categories, numbered as in the data file (the paper prints them
// in the order 4, 1, 2, 3, 5).
const (
	MultiHop    = 1
	Temporal    = 2
	OpenDomain  = 3
	SingleHop   = 4
	Adversarial = 5 // no answer in the conversation; the evidence is what the question baits with
)

// CategoryName returns a category's short name ("multi-hop"), or
// "category N" for a number the benchmark does not define.
func CategoryName(c int) string {
	switch c {
	case MultiHop:
		return "multi-hop"
	case Temporal:
		return "temporal"
	case OpenDomain:
		return "open-domain"
	case SingleHop:
		return "single-hop"
	case Adversarial:
		return "adversarial"
	}
	return "category " + strconv.Itoa(c)
}

// Sample is one conversation of the benchmark with its questions.
type Sample struct {
	ID       string // sample_id, e.g. "conv-26"
	SpeakerA string
	SpeakerB string
	Sessions []*Session // in session number order
	QA       []*QA
}

// Session is one sitting of a conversation.
type Session struct {
	N        int       // the n of session_<n>
	DateTime string    // session_<n>_date_time as written, e.g. "1:56 pm on 8 May, 2023"
	Time     time.Time // DateTime parsed, in UTC
	Turns    []*Turn
}

// Turn is one utterance of a session.
type Turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"` // "D<session>:<turn>", unique within the conversation
	Text    string `json:"text"`
	// A turn that shared an image has the image's URLs, a BLIP caption of
	// it and the web query that found it; the images are not released.
	ImgURL      []string `json:"img_url,omitempty"`
	BlipCaption string   `json:"blip_caption,omitempty"`
	Query       string   `json:"query,omitempty"`
}

// SharedImage reports whether the turn shared an image.
func (t *Turn) SharedImage() bool { return t.BlipCaption != "" || len(t.ImgURL) > 0 }

// Content is the text stored for the turn: its text and, when it shared an
// image, " [shared an image: <caption>]", which is all a text-only memory
// can know of the image.
func (t *Turn) Content() string {
	if !t.SharedImage() {
		return t.Text
	}
	img := "[shared an image]"
	if t.BlipCaption != "" {
		img = "[shared an image: " + t.BlipCaption + "]"
	}
	return strings.TrimSpace(t.Text + " " + img)
}

// QA is one question. Answer is raw JSON because the file holds strings
// and a few numbers; adversarial questions have none.
type QA struct {
	Question          string          `json:"question"`
	Answer            json.RawMessage `json:"answer,omitempty"`
	AdversarialAnswer string          `json:"adversarial_answer,omitempty"`
	Evidence          []string        `json:"evidence"` // dia_ids as written, sometimes malformed (see ParseEvidence)
	Category          int             `json:"category"`
}

// ReadFile reads a LoCoMo data file (see Parse).
func ReadFile(path string) ([]*Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return samples, nil
}

var sessionKey = regexp.MustCompile(`^session_([0-9]+)$`)

// Parse reads the JSON of a LoCoMo data file: a list of samples, each with
// sample_id, conversation and qa. The sessions of a conversation are the
// session_<n> keys whose value is a list, in numeric order; a
// session_<n>_date_time without its session is ignored. Every session
// must have a date that ParseDateTime reads, and every turn a dia_id and a
// speaker who is speaker_a or speaker_b. Other keys (the dataset's
// generated summaries and observations) are ignored.
func Parse(r io.Reader) ([]*Sample, error) {
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []*QA                      `json:"qa"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode locomo file: %w", err)
	}
	samples := make([]*Sample, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		if r.SampleID == "" {
			return nil, fmt.Errorf("sample %d has no sample_id", i)
		}
		if seen[r.SampleID] {
			return nil, fmt.Errorf("sample_id %q appears twice", r.SampleID)
		}
		seen[r.SampleID] = true
		s, err := parseConversation(r.SampleID, r.Conversation)
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", r.SampleID, err)
		}
		for j, q := range r.QA {
			if q == nil {
				return nil, fmt.Errorf("sample %s: qa[%d] is null", r.SampleID, j)
			}
		}
		s.QA = r.QA
		samples = append(samples, s)
	}
	return samples, nil
}

func parseConversation(id string, conv map[string]json.RawMessage) (*Sample, error) {
	s := &Sample{ID: id}
	if err := json.Unmarshal(conv["speaker_a"], &s.SpeakerA); err != nil || s.SpeakerA == "" {
		return nil, fmt.Errorf("conversation has no speaker_a")
	}
	if err := json.Unmarshal(conv["speaker_b"], &s.SpeakerB); err != nil || s.SpeakerB == "" {
		return nil, fmt.Errorf("conversation has no speaker_b")
	}
	if s.SpeakerA == s.SpeakerB {
		return nil, fmt.Errorf("speaker_a and speaker_b are both %q", s.SpeakerA)
	}
	dias := map[string]bool{}
	for key, val := range conv {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil || !bytes.HasPrefix(bytes.TrimSpace(val), []byte("[")) {
			continue
		}
		ses := &Session{}
		var err error
		if ses.N, err = strconv.Atoi(m[1]); err != nil {
			return nil, fmt.Errorf("%s: bad session number", key)
		}
		if err := json.Unmarshal(val, &ses.Turns); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if err := json.Unmarshal(conv[key+"_date_time"], &ses.DateTime); err != nil || ses.DateTime == "" {
			return nil, fmt.Errorf("%s has no %s_date_time", key, key)
		}
		if ses.Time, err = ParseDateTime(ses.DateTime); err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", key, err)
		}
		for j, t := range ses.Turns {
			switch {
			case t == nil:
				return nil, fmt.Errorf("%s[%d] is null", key, j)
			case t.DiaID == "":
				return nil, fmt.Errorf("%s[%d] has no dia_id", key, j)
			case dias[t.DiaID]:
				return nil, fmt.Errorf("%s[%d]: dia_id %q appears twice", key, j, t.DiaID)
			case t.Speaker != s.SpeakerA && t.Speaker != s.SpeakerB:
				return nil, fmt.Errorf("%s[%d]: speaker %q is neither %q nor %q", key, j, t.Speaker, s.SpeakerA, s.SpeakerB)
			}
			dias[t.DiaID] = true
		}
		s.Sessions = append(s.Sessions, ses)
	}
	if len(s.Sessions) == 0 {
		return nil, fmt.Errorf("conversation has no sessions")
	}
	slices.SortFunc(s.Sessions, func(a, b *Session) int { return a.N - b.N })
	return s, nil
}

// dateLayouts are the forms of session_<n>_date_time that ParseDateTime
// reads, after lower-casing ("pm" in a layout matches only lower case;
// month names match in any case). The first is the only one in LoCoMo.
var dateLayouts = []string{
	"3:04 pm on 2 January, 2006",
	"3:04 pm on 2 Jan, 2006",
	"3:04 pm on January 2, 2006",
	"3:04 pm, 2 January 2006",
	"2 January 2006",
	time.RFC3339,
}

// ParseDateTime reads a session's free-text date such as
// "1:56 pm on 8 May, 2023" or "10:37 am on 27 June, 2023" as a time in UTC
// (the data has no time zone). It also reads a few close variants and
// RFC 3339.
func ParseDateTime(s string) (time.Time, error) {
	norm := strings.ToLower(strings.Join(strings.Fields(s), " "))
	for _, layout := range dateLayouts {
		v := norm
		if layout == time.RFC3339 {
			v = strings.ToUpper(norm) // the T and Z
		}
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q is not like %q", s, "1:56 pm on 8 May, 2023")
}

var evidenceID = regexp.MustCompile(`D:?([0-9]+):([0-9]+)`)

// ParseEvidence reads one evidence string of a question as dia_ids: every
// match of D<session>:<turn> (also the typo D:<session>:<turn>), each part
// read as an integer, so "D3:6; D4:12" gives D3:6 and D4:12, "D12:04"
// gives D12:4, and "D" gives nothing. wellFormed reports whether s was
// exactly one id written canonically.
func ParseEvidence(s string) (ids []string, wellFormed bool) {
	for _, m := range evidenceID.FindAllStringSubmatch(s, -1) {
		ses, err1 := strconv.Atoi(m[1])
		turn, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil { // only for absurdly long numbers
			continue
		}
		ids = append(ids, "D"+strconv.Itoa(ses)+":"+strconv.Itoa(turn))
	}
	return ids, len(ids) == 1 && ids[0] == s
}
