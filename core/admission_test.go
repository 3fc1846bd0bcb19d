package core_test

import (
	"context"
	"errors"
	"github.com/agentmem/agentmem/internal/testutil"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
)

func stats(a *core.Admitter, w core.Work) core.AdmissionStats {
	for _, st := range a.Stats() {
		if st.Work == string(w) {
			return st
		}
	}
	return core.AdmissionStats{}
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

func TestAdmitter(t *testing.T) {
	ctx := context.Background()
	busy := func(t *testing.T, err error) {
		t.Helper()
		if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || !errors.Is(err, core.ErrBusy) {
			t.Fatalf("err = %v, want EUNAVAILABLE and ErrBusy", err)
		}
	}

	t.Run("RefusedAfterTheWait", func(t *testing.T) {
		a := core.NewAdmitter(core.Admission{Search: 1, Wait: time.Millisecond})
		release, err := a.Admit(ctx, core.WorkSearch, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Admit(ctx, core.WorkSearch, 1)
		busy(t, err)
		// The other class is not held by this one.
		rb, err := a.Admit(ctx, core.WorkBulk, 1)
		if err != nil {
			t.Fatalf("bulk while searches are busy: %v", err)
		}
		rb()
		release()
		release() // a second call gives nothing back twice
		if st := stats(a, core.WorkSearch); st.Rejected != 1 || st.Running != 0 || st.Waiting != 0 {
			t.Errorf("stats %+v, want 1 rejected, none running or waiting", st)
		}
		r2, err := a.Admit(ctx, core.WorkSearch, 1)
		if err != nil {
			t.Fatalf("after the release: %v", err)
		}
		r2()
	})

	t.Run("AdmittedWhenReleased", func(t *testing.T) {
		a := core.NewAdmitter(core.Admission{Search: 1, Wait: time.Minute})
		release, err := a.Admit(ctx, core.WorkSearch, 1)
		if err != nil {
			t.Fatal(err)
		}
		admitted := make(chan error, 1)
		go func() {
			r, err := a.Admit(ctx, core.WorkSearch, 1)
			if err == nil {
				r()
			}
			admitted <- err
		}()
		waitFor(t, "a search waiting", func() bool { return stats(a, core.WorkSearch).Waiting == 1 })
		release()
		if err := <-admitted; err != nil {
			t.Fatalf("waiting search, once the running one is done: %v", err)
		}
	})

	t.Run("QueueFull", func(t *testing.T) {
		const size, queue = 1, 64 // queuePerSlot × size
		a := core.NewAdmitter(core.Admission{Search: size, Wait: time.Minute})
		release, err := a.Admit(ctx, core.WorkSearch, 1)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, queue)
		for range queue {
			go func() {
				r, err := a.Admit(ctx, core.WorkSearch, 1)
				if err == nil {
					r()
				}
				done <- err
			}()
		}
		waitFor(t, "the queue full", func() bool { return stats(a, core.WorkSearch).Waiting == queue })
		_, err = a.Admit(ctx, core.WorkSearch, 1) // refused at once, not after a minute
		busy(t, err)
		release()
		for range queue {
			if err := <-done; err != nil {
				t.Errorf("queued search: %v", err)
			}
		}
	})

	t.Run("ClientGone", func(t *testing.T) {
		a := core.NewAdmitter(core.Admission{Bulk: 1, Wait: time.Minute})
		release, err := a.Admit(ctx, core.WorkBulk, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		cctx, cancel := context.WithCancel(ctx)
		gone := make(chan error, 1)
		go func() { _, err := a.Admit(cctx, core.WorkBulk, 1); gone <- err }()
		waitFor(t, "an export waiting", func() bool { return stats(a, core.WorkBulk).Waiting == 1 })
		cancel()
		if err := <-gone; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if st := stats(a, core.WorkBulk); st.Rejected != 0 || st.Waiting != 0 {
			t.Errorf("stats %+v: a client that left is not a refusal", st)
		}
	})

	t.Run("WeightAboveSize", func(t *testing.T) {
		a := core.NewAdmitter(core.Admission{Search: 2, Wait: -1})
		release, err := a.Admit(ctx, core.WorkSearch, 5) // takes the whole class, not never
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Admit(ctx, core.WorkSearch, 1)
		busy(t, err)
		release()
	})

	t.Run("Defaults", func(t *testing.T) {
		a := core.NewAdmitter(core.Admission{})
		want := map[core.Work]int64{core.WorkSearch: int64(runtime.GOMAXPROCS(0)), core.WorkBulk: int64(max(runtime.GOMAXPROCS(0)/2, 1))}
		for w, n := range want {
			if st := stats(a, w); st.Size != n {
				t.Errorf("%s: size %d, want %d", w, st.Size, n)
			}
		}
	})

	t.Run("NoBound", func(t *testing.T) {
		var releases []func()
		for _, a := range []*core.Admitter{core.NewAdmitter(core.Admission{Search: -1, Wait: -1}), nil} {
			for range 100 {
				r, err := a.Admit(ctx, core.WorkSearch, 1)
				if err != nil {
					t.Fatalf("no bound: %v", err)
				}
				releases = append(releases, r)
			}
		}
		for _, r := range releases {
			r()
		}
	})
}

// TestService_AdmitsBulk: the service's imports and exports, of users and
// threads, take a turn of the bulk class; with none free they are
// refused (EUNAVAILABLE), while searches, appends and reads go on; a
// search takes a turn of its own class.
func TestService_AdmitsBulk(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	adm := core.NewAdmitter(core.Admission{Search: 1, Bulk: 1, Wait: -1})
	svc := core.New(store, core.Options{Admitter: adm})
	if err := svc.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "I pack the tent."}}, ""); err != nil {
		t.Fatal(err)
	}
	x, err := svc.ExportThread(ctx, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	x.Thread.ID = "copy"

	release, err := adm.Admit(ctx, core.WorkBulk, 1) // another export runs
	if err != nil {
		t.Fatal(err)
	}
	bulk := map[string]func() error{
		"ExportUser": func() error { return svc.ExportUser(ctx, "alice", agentmem.ExportOptions{}, io.Discard) },
		"ImportUser": func() error {
			_, err := svc.ImportUser(ctx, "bob", &agentmem.UserExport{Version: agentmem.ExportVersion}, agentmem.ImportOptions{})
			return err
		},
		"ExportThread": func() error { _, err := svc.ExportThread(ctx, "alice", "t"); return err },
		"ImportThread": func() error { _, err := svc.ImportThread(ctx, "carol", x); return err },
	}
	for name, call := range bulk {
		if err := call(); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || !errors.Is(err, core.ErrBusy) {
			t.Errorf("%s while the bulk class is busy: %v, want EUNAVAILABLE and ErrBusy", name, err)
		}
	}
	if _, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: "tent"}); err != nil {
		t.Errorf("search while the bulk class is busy: %v", err)
	}
	if _, err := svc.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "And the stove."}}, ""); err != nil {
		t.Errorf("append while the bulk class is busy: %v", err)
	}
	release()
	for name, call := range bulk {
		if err := call(); err != nil {
			t.Errorf("%s once the bulk class is free: %v", name, err)
		}
	}

	release, err = adm.Admit(ctx, core.WorkSearch, 1) // another search runs
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := svc.Search(ctx, "alice", agentmem.SearchRequest{Query: "tent"}); !errors.Is(err, core.ErrBusy) {
		t.Errorf("search while the search class is busy: %v, want ErrBusy", err)
	}
	if _, err := svc.Facts(ctx, "alice", agentmem.SearchRequest{Query: "tent"}); !errors.Is(err, core.ErrBusy) {
		t.Errorf("facts while the search class is busy: %v, want ErrBusy", err)
	}
}
