package locomo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/google/go-cmp/cmp"
)

// fixture is a conversation written for these tests (not LoCoMo's data,
// whose licence keeps it out of the repository) in LoCoMo's format.
const fixture = "testdata/conversation.json"

// mustReadFixture returns the fixture's one sample.
func mustReadFixture(tb testing.TB) *locomo.Sample {
	tb.Helper()
	samples, err := locomo.ReadFile(fixture)
	if err != nil {
		tb.Fatal(err)
	}
	if len(samples) != 1 {
		tb.Fatalf("%d samples, want 1", len(samples))
	}
	return samples[0]
}

func TestParse(t *testing.T) {
	s := mustReadFixture(t)
	if s.ID != "conv-demo" || s.SpeakerA != "Ines" || s.SpeakerB != "Marek" {
		t.Fatalf("ID, speakers = %q, %q, %q", s.ID, s.SpeakerA, s.SpeakerB)
	}
	// session_4_date_time has no session behind it.
	var got []string
	turns := 0
	for _, ses := range s.Sessions {
		got = append(got, ses.DateTime+" = "+ses.Time.Format(time.RFC3339))
		turns += len(ses.Turns)
	}
	want := []string{
		"1:56 pm on 8 May, 2023 = 2023-05-08T13:56:00Z",
		"10:37 am on 27 June, 2023 = 2023-06-27T10:37:00Z",
		"9:05 pm on 3 July, 2023 = 2023-07-03T21:05:00Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sessions mismatch (-want +got):\n%s", diff)
	}
	if turns != 13 {
		t.Fatalf("turns = %d, want 13", turns)
	}
	img := s.Sessions[1].Turns[2]
	if !img.SharedImage() || img.Query != "greyhound sleeping couch" || len(img.ImgURL) != 1 {
		t.Fatalf("image turn = %+v", img)
	}
	if got, want := img.Content(), "Here is Mist after her first walk. [shared an image: a photo of a grey dog sleeping on a blue couch]"; got != want {
		t.Fatalf("Content() = %q, want %q", got, want)
	}
	if got := s.Sessions[0].Turns[0].Content(); got != s.Sessions[0].Turns[0].Text {
		t.Fatalf("Content() of a text turn = %q", got)
	}
	if len(s.QA) != 8 {
		t.Fatalf("%d questions, want 8", len(s.QA))
	}
	if q := s.QA[2]; string(q.Answer) != "2023" || q.Category != locomo.Temporal {
		t.Fatalf("qa[2] = %+v, want the numeric answer 2023", q)
	}
	if q := s.QA[7]; q.Answer != nil || q.AdversarialAnswer != "Petrel" || q.Category != locomo.Adversarial {
		t.Fatalf("qa[7] = %+v", q)
	}
}

func TestParse_Err(t *testing.T) {
	const turn = `{"speaker": "A", "dia_id": "D1:1", "text": "hi"}`
	for name, tc := range map[string]struct{ json, want string }{
		"NotJSON":        {`{`, "decode"},
		"NoSampleID":     {`[{"conversation": {}}]`, "no sample_id"},
		"NoSpeakerB":     {`[{"sample_id": "c", "conversation": {"speaker_a": "A"}}]`, "no speaker_b"},
		"NoSessions":     {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023"}}]`, "no sessions"},
		"NoDate":         {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [` + turn + `]}}]`, "no session_1_date_time"},
		"BadDate":        {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "yesterday", "session_1": [` + turn + `]}}]`, `date "yesterday"`},
		"UnknownSpeaker": {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [{"speaker": "C", "dia_id": "D1:1", "text": "hi"}]}}]`, `speaker "C"`},
		"DuplicateDiaID": {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [` + turn + `,` + turn + `]}}]`, "appears twice"},
		"NullQuestion":   {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [` + turn + `]}, "qa": [null]}]`, "qa[0] is null"},
		"DuplicateSample": {`[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": [` + turn + `]}},
			{"sample_id": "c", "conversation": {}}]`, `"c" appears twice`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := locomo.Parse(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseDateTime(t *testing.T) {
	for in, want := range map[string]string{
		"1:56 pm on 8 May, 2023":         "2023-05-08T13:56:00Z",
		"10:37 am on 27 June, 2023":      "2023-06-27T10:37:00Z",
		"12:09 am on 13 September, 2023": "2023-09-13T00:09:00Z",
		"12:48 pm on 1 January, 2024":    "2024-01-01T12:48:00Z",
		"7:05 PM on 9 October, 2022":     "2022-10-09T19:05:00Z",
		" 4:04  pm on 20 Jan, 2023 ":     "2023-01-20T16:04:00Z",
		"8:15 am on March 3, 2023":       "2023-03-03T08:15:00Z",
		"2023-05-08T13:56:00Z":           "2023-05-08T13:56:00Z",
	} {
		got, err := locomo.ParseDateTime(in)
		if err != nil {
			t.Errorf("ParseDateTime(%q): %v", in, err)
		} else if got.Format(time.RFC3339) != want {
			t.Errorf("ParseDateTime(%q) = %v, want %v", in, got.Format(time.RFC3339), want)
		}
	}
	for _, bad := range []string{"", "yesterday", "25:00 pm on 8 May, 2023", "1:56 pm on 31 February, 2023"} {
		if got, err := locomo.ParseDateTime(bad); err == nil {
			t.Errorf("ParseDateTime(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseEvidence(t *testing.T) {
	for _, tc := range []struct {
		in         string
		want       []string
		wellFormed bool
	}{
		{"D1:3", []string{"D1:3"}, true},
		{"D12:10", []string{"D12:10"}, true},
		{"D3:6; D4:12", []string{"D3:6", "D4:12"}, false},
		{"D2:1 D5:3 D5:7", []string{"D2:1", "D5:3", "D5:7"}, false},
		{"D:7:14", []string{"D7:14"}, false},
		{"D12:04", []string{"D12:4"}, false},
		{" D2:1", []string{"D2:1"}, false},
		{"D", nil, false},
		{"", nil, false},
	} {
		got, ok := locomo.ParseEvidence(tc.in)
		if !cmp.Equal(got, tc.want) || ok != tc.wellFormed {
			t.Errorf("ParseEvidence(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.wellFormed)
		}
	}
}
