package vecenc

import (
	"encoding/hex"

	"github.com/agentmem/agentmem"
)

// The keys of stored vectors, shared by the SQLite and PostgreSQL stores:
// a scope is stored as a small integer, an item's ID in fewer bytes than
// its text. Their migrations (SQLite 0022, PostgreSQL 0023) write the same
// in SQL.

// Scopes are the vectors' scopes by their stored code: a scope's code is
// its index. The codes are stored: append, never reorder.
var Scopes = [...]string{agentmem.ScopeMessages, agentmem.ScopeMemories, agentmem.ScopeChunks, agentmem.ScopeSummaries}

// ScopeCode returns the stored code of scope; false for a scope without
// one.
func ScopeCode(scope string) (int, bool) {
	for i, s := range Scopes {
		if s == scope {
			return i, true
		}
	}
	return 0, false
}

// Scope returns the scope whose stored code is code; false for an unknown
// code.
func Scope(code int64) (string, bool) {
	if code < 0 || code >= int64(len(Scopes)) {
		return "", false
	}
	return Scopes[code], true
}

// uuidID marks the stored form of an ID that starts with a UUID. No ID
// starts with it: an ID holds no control character (agentmem.ValidateID).
const uuidID = 1

// AppendID appends the stored form of a vector's item ID to b. An ID that
// starts with a UUID in canonical text form (lower-case hex, as
// agentmem.NewID makes: messages', chunks' and memories' IDs), followed
// or not by a suffix (a chunk's summary vector: its ID and "#s"), takes 17
// bytes for the UUID's 36 characters: uuidID, the UUID's last 10 bytes,
// its first 6, then the suffix. Any other ID is its own bytes.
//
// The last bytes come first because a UUIDv7 starts with its time, and a
// b-tree keyed by IDs in time order is written at the end of a range in
// the middle of the tree (a user's messages' vectors come after their
// chunks' were made), where PostgreSQL splits a full page in halves and
// none is ever filled again: its primary key of vectors was half empty.
// The random bytes first spread the writes (everyday workload: 116 → 89
// bytes a message).
func AppendID(b []byte, id string) []byte {
	if !isUUID(id) {
		return append(b, id...)
	}
	var u [16]byte
	hex.Decode(u[0:4], []byte(id[0:8]))
	hex.Decode(u[4:6], []byte(id[9:13]))
	hex.Decode(u[6:8], []byte(id[14:18]))
	hex.Decode(u[8:10], []byte(id[19:23]))
	hex.Decode(u[10:16], []byte(id[24:36]))
	b = append(b, uuidID)
	b = append(b, u[6:]...)
	b = append(b, u[:6]...)
	return append(b, id[36:]...)
}

// EncodeID returns the stored form of a vector's item ID (see AppendID).
func EncodeID(id string) []byte { return AppendID(make([]byte, 0, len(id)), id) }

// ID returns the item ID whose stored form is b (see AppendID).
func ID(b []byte) string {
	if len(b) < 17 || b[0] != uuidID {
		return string(b)
	}
	var u [16]byte
	copy(u[6:], b[1:11])
	copy(u[:6], b[11:17])
	var buf [64]byte // on the stack: the string is the one allocation
	s := buf[:36]
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(append(s, b[17:]...))
}

// isUUID reports whether id starts with a UUID in canonical text form:
// 8-4-4-4-12 lower-case hex digits.
func isUUID(id string) bool {
	if len(id) < 36 {
		return false
	}
	for i := range 36 {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
