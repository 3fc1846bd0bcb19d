// Package agentmem is the domain of the agentmem memory service: threads of
// messages belonging to users, their elements and active sessions, the
// error type with codes, and the small storage interfaces that the sqlite
// and postgres packages implement.
//
// It imports the standard library only.
package agentmem

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxIDBytes is the longest identifier (user, agent, thread, message,
// element, idempotency key) that agentmem accepts.
const MaxIDBytes = 200

// NewID returns a new random identifier in UUID version 7 layout: the first
// 48 bits are the Unix time in milliseconds, so IDs sort roughly by creation.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ValidateID checks an identifier given by a client; field names it in the
// error. An ID is 1 to MaxIDBytes bytes of valid UTF-8 with no slash, no
// whitespace and no control characters, and is not "." or "..", so it is
// safe in a URL path (where a . or .. segment is cleaned away, so that a
// record with such an ID could never be reached).
func ValidateID(field, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s is required.", field)
	case id == "." || id == "..":
		return Errorf(EINVALID, `%s may not be "." or "..".`, field)
	case len(id) > MaxIDBytes:
		return Errorf(EINVALID, "%s is longer than %d bytes.", field, MaxIDBytes)
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "%s is not valid UTF-8.", field)
	}
	if strings.ContainsFunc(id, func(r rune) bool {
		return r == '/' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r)
	}) {
		return Errorf(EINVALID, "%s %q may not contain slashes, spaces or control characters.", field, id)
	}
	return nil
}

// ReservedIDPrefix starts the user and tenant IDs agentmem keeps for its
// own records (reembed.SystemUser holds the jobs that concern every user),
// which no client may name: see ValidateClientID.
const ReservedIDPrefix = "_"

// ValidateClientID checks a user or tenant ID as a client names it: a
// valid ID (see ValidateID) that does not start with ReservedIDPrefix.
// The stores check ValidateUserID only, since agentmem's own records use
// reserved IDs.
func ValidateClientID(field, id string) error {
	if err := ValidateID(field, id); err != nil {
		return err
	}
	if strings.HasPrefix(id, ReservedIDPrefix) {
		return Errorf(EINVALID, "%s %q is reserved: IDs starting with %s are agentmem's own.", field, id, ReservedIDPrefix)
	}
	return nil
}

// ValidateUserID checks a user ID as the stores receive it: a client's
// user ID (see ValidateID), or a tenant's user "TENANT/USER" whose two
// parts are each valid IDs (see Scope.StoredUserID).
func ValidateUserID(id string) error {
	if tenant, user, ok := strings.Cut(id, "/"); ok {
		if err := ValidateID("user_id", tenant); err != nil {
			return err
		}
		return ValidateID("user_id", user)
	}
	return ValidateID("user_id", id)
}

// Timestamp returns t in UTC truncated to microseconds, the precision that
// every backend stores, so a value read back equals the value written.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// timestampPtr returns *t as Timestamp does, nil for nil.
func timestampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := Timestamp(*t)
	return &u
}

// ValidateText checks free text from a client: valid UTF-8 and no NUL
// characters (which PostgreSQL cannot store). field names it in the error.
func ValidateText(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8.", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(EINVALID, "%s may not contain NUL characters.", field)
	}
	return nil
}

// textFilter is a text field of a filter: its name and value (nil when
// unset).
type textFilter struct {
	name string
	v    *string
}

// validateTextFilters checks each set field with ValidateText, in order:
// a filter compares text, and text that cannot be stored (NUL) or is not
// text (invalid UTF-8) is a client's mistake that every backend must
// answer alike (PostgreSQL refuses NUL; SQLite would compare it).
func validateTextFilters(fs ...textFilter) error {
	for _, f := range fs {
		if f.v != nil {
			if err := ValidateText(f.name, *f.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidateTime checks a time given by a client: zero (unset) or within the
// years 1 to 9999, which every backend and RFC 3339 can represent.
//
// The year is checked in UTC, where the stores keep times (see Timestamp):
// 9999-12-31T23:59:59-01:00 is in year 9999 where it was written but in
// 10000 in UTC, which encoding/json cannot marshal, so that accepting it
// made every answer showing the time a 500 (found by FuzzDecode).
func ValidateTime(field string, t time.Time) error {
	if y := t.UTC().Year(); !t.IsZero() && (y < 1 || y > 9999) {
		return Errorf(EINVALID, "%s must be between the years 1 and 9999.", field)
	}
	return nil
}

// MaxClockSkew is how far ahead of the server's clock a client's time may
// be (see ValidateNotFuture): clocks of clients and servers disagree by
// seconds, now and then by minutes, but not by more.
const MaxClockSkew = 5 * time.Minute

// ValidateNotFuture checks that a time given by a client as when something
// happened (a message's created_at) is not after now, give or take
// MaxClockSkew. field names it in the error. A time far ahead would sort
// after everything written until then, and pass every "since" filter.
func ValidateNotFuture(field string, t, now time.Time) error {
	if t.After(now.Add(MaxClockSkew)) {
		return Errorf(EINVALID, "%s %s is in the future; it may be at most %d minutes ahead of the server's clock.",
			field, t.UTC().Format(time.RFC3339Nano), int(MaxClockSkew/time.Minute))
	}
	return nil
}

// ParseAge reads a duration as Go writes it ("12h", "90m", "1h30m") with
// days and weeks too ("30d", "2w", "1d12h", "1.5d"); a day is 24 hours.
// field names it in the EINVALID error. Negative and absurd (over 100
// years) ages are refused. Every duration agentmem reads, over the API
// and on the command line, goes through it.
func ParseAge(field, s string) (time.Duration, error) {
	const maxAge = 100 * 365 * 24 * time.Hour
	bad := Errorf(EINVALID, "%s %q is not a duration such as 30d, 2w, 12h or 1d12h.", field, s)
	// Days and weeks become hours; time.ParseDuration reads the rest.
	if s == "0" {
		return 0, nil
	}
	var b strings.Builder
	for rest := s; rest != ""; {
		i := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, bad // no number, or a number without a unit
		}
		j := strings.IndexFunc(rest[i:], func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
		if j < 0 {
			j = len(rest) - i
		}
		num, unit := rest[:i], rest[i:i+j]
		rest = rest[i+j:]
		hours := map[string]float64{"d": 24, "w": 7 * 24}[unit]
		if hours == 0 {
			b.WriteString(num + unit)
			continue
		}
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, bad
		}
		if n*hours > float64(maxAge/time.Hour) {
			return 0, Errorf(EINVALID, "%s %q is longer than 100 years.", field, s)
		}
		b.WriteString(strconv.FormatFloat(n*hours, 'f', -1, 64) + "h")
	}
	d, err := time.ParseDuration(b.String())
	if err != nil || d < 0 {
		return 0, bad
	}
	if d > maxAge {
		return 0, Errorf(EINVALID, "%s %q is longer than 100 years.", field, s)
	}
	return d, nil
}
