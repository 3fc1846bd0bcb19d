// Package storetest is the conformance suite of agentmem.Store: every
// backend runs it against a fresh, migrated store of its own.
package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// Run exercises the agentmem.Store contract. open returns an empty,
// migrated store that the suite may close; each call returns a new one.
// The cases run in parallel, each on a store of its own, so open must be
// safe to call from several goroutines.
func Run(t *testing.T, open func(tb testing.TB) agentmem.Store) {
	for _, c := range []struct {
		name string
		test func(*testing.T, agentmem.Store)
	}{
		{"CreateThread", testCreateThread},
		{"FindThreads", testFindThreads},
		{"FindThreads/Filters", testFindThreadsFilters},
		{"FindThreads/Title", testFindThreadsTitle},
		{"Cursors", testCursorsBound},
		{"Filters/Text", testFilterText},
		{"IDs/Dots", testDotIDs},
		{"UpdateThread", testUpdateThread},
		{"DeleteThread", testDeleteThread},
		{"RestoreThread", testRestoreThread},
		{"FindThreads/Deleted", testFindDeletedThreads},
		{"AppendMessages", testAppendMessages},
		{"AppendMessages/Invalid", testAppendInvalid},
		{"AppendMessages/Idempotency", testIdempotency},
		{"AppendMessages/ClientIDs", testClientIDs},
		{"AppendMessages/Concurrent", testConcurrentAppends},
		{"AppendMessages/ConcurrentRetries", testConcurrentRetries},
		{"AppendMessages/Jobs", testAppendJobs},
		{"AppendMessages/JobsCoverage", testAppendJobsCoverage},
		{"FindMessages", testFindMessages},
		{"Elements", testElements},
		{"Sessions", testSessions},
		{"Sessions/Open", testOpenSession},
		{"Sessions/SetWhileOpening", testSetSessionWhileOpening},
		{"ImportExport", testImportExport},
		{"ImportUser", testImportUser},
		{"ImportUser/Conflicts", testImportUserConflicts},
		{"ImportUser/Atomic", testImportUserAtomic},
		{"ImportUser/Version1", testImportUserVersion1},
		{"ImportUser/Jobs", testImportUserJobs},
		{"ImportUser/Checks", testImportUserChecks},
		{"ImportUser/MaxVersion", testImportUserMaxVersion},
		{"ImportUser/Duplicates", testImportUserDuplicates},
		{"ImportUser/StoredRefs", testImportUserStoredRefs},
		{"ImportUser/StoredClashes", testImportUserStoredClashes},
		{"ImportUser/LongThread", testImportUserLongThread},
		{"Export/DeletedThread", testExportDeletedThread},
		{"DeleteUser", testDeleteUser},
		{"DeleteUser/JobsInFlight", testErasureJobsInFlight},
		{"DeleteUser/RequestsInFlight", testErasureRequestsInFlight},
		{"DeleteThreadsBefore", testDeleteThreadsBefore},
		{"Stats", testStats},
		{"FindUsers", testFindUsers},
		{"Keys", testKeys},
		{"Keys/Find", testFindKeys},
		{"Audit", testAudit},
		{"EnqueueJob", testEnqueueJob},
		{"EnqueueJob/Concurrent", testEnqueueJobConcurrent},
		{"ClaimJobs", testClaimJobs},
		{"ClaimJobs/Lease", testClaimJobsLease},
		{"ClaimJobs/Concurrent", testClaimJobsConcurrent},
		{"ClaimJobs/Serial", testClaimJobsSerial},
		{"JobBacklog", testJobBacklog},
		{"ActiveJobs", testActiveJobs},
		{"DeleteDoneJobs", testDeleteDoneJobs},
		{"ClaimJobs/SerialConcurrent", testClaimJobsSerialConcurrent},
		{"CompleteJob", testCompleteJob},
		{"ReleaseJob", testReleaseJob},
		{"FailJob", testFailJob},
		{"RetryJob", testRetryJob},
		{"FindJobs", testFindJobs},
		{"Jobs/Erasure", testJobErasure},
		{"PutSummary", testPutSummary},
		{"PutSummary/Concurrent", testPutSummaryConcurrent},
		{"Summaries/Erasure", testSummaryErasure},
		{"PutReflections", testPutReflections},
		{"FindReflections", testFindReflections},
		{"Profiles", testProfiles},
		{"Profiles/Processed", testProfileProcessed},
		{"PutProfile/Concurrent", testPutProfileConcurrent},
		{"Reflections/Erasure", testReflectionErasure},
		{"CreateMemory", testCreateMemory},
		{"UpdateMemory", testUpdateMemory},
		{"InvalidateMemory", testInvalidateMemory},
		{"WriteMemories", testWriteMemories},
		{"DeleteMemory", testDeleteMemory},
		{"FindMemories", testFindMemories},
		{"FindMemorySources", testFindMemorySources},
		{"Memories/Sources", testMemorySources},
		{"Memories/Erasure", testMemoryErasure},
		{"Memories/Concurrent", testMemoriesConcurrent},
		{"Entities", testEntities},
		{"EntityRefs", testEntityRefs},
		{"Entities/Erasure", testEntityErasure},
		{"Entities/Concurrent", testEntitiesConcurrent},
		{"Vectors", testVectors},
		{"VectorSpaces", testVectorSpaces},
		{"SearchText", testSearchText},
		{"FindItems", testFindItems},
		{"SearchText/MemoryKind", testSearchMemoryKind},
		{"Chunks", testChunks},
		{"Chunks/Labels", testChunkLabels},
		{"Chunks/Text", testChunkText},
		{"MessageWindows", testMessageWindows},
		{"SummarySearch", testSummarySearch},
		{"VectorsState", testVectorsState},
		{"Notes", testNotes},
		{"Notes/Concurrent", testNotesConcurrent},
		{"Notes/Erasure", testNotesErasure},
		{"FindIdleThreads", testFindIdleThreads},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open(t))
		})
	}
}

var ctx = context.Background()

// wantCode fails unless err carries the agentmem error code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := agentmem.ErrorCode(err); got != code {
		tb.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
}

// mustMarshal returns v's JSON, failing tb if it cannot.
func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("json.Marshal(%T): %v", v, err)
	}
	return b
}

// jsonEqual compares json.RawMessage values by meaning, not bytes (a
// backend may store JSON in a normalised form).
func jsonEqual() cmp.Option {
	return cmp.Comparer(func(a, b json.RawMessage) bool {
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(x, y)
	})
}
