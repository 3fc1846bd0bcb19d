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
// whitespace and no control characters, so it is safe in a URL path.
func ValidateID(field, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s is required.", field)
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

// Timestamp returns t in UTC truncated to microseconds, the precision that
// every backend stores, so a value read back equals the value written.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
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

// ValidateTime checks a time given by a client: zero (unset) or within the
// years 1 to 9999, which every backend and RFC 3339 can represent.
func ValidateTime(field string, t time.Time) error {
	if !t.IsZero() && (t.Year() < 1 || t.Year() > 9999) {
		return Errorf(EINVALID, "%s must be between the years 1 and 9999.", field)
	}
	return nil
}
