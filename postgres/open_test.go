package postgres_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/postgres"
)

// TestOpenInBackground: a database that cannot be reached at start
// leaves a store that answers EUNAVAILABLE (agentmem.ErrStoreDown) to
// every call until it can, then connects, migrates and serves without
// being opened again; a mistake (a refused password) fails at once, as
// Open does.
func TestOpenInBackground(t *testing.T) {
	t.Parallel()
	dsn := MustCreateSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	fast := func(int) time.Duration { return 10 * time.Millisecond }

	t.Run("DownThenUp", func(t *testing.T) {
		// A port nobody listens on, until the test forwards it to
		// PostgreSQL.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		down := *u
		down.Host = addr
		s, err := postgres.OpenInBackground(ctx, down.String(), nil, fast)
		if err != nil {
			t.Fatalf("OpenInBackground while the database is down: %v, want a store", err)
		}
		defer s.Close()
		select {
		case <-s.Ready():
			t.Fatal("Ready while the database is down")
		default:
		}
		for name, err := range map[string]error{
			"Ping":           s.Ping(ctx),
			"FindThreadByID": func() error { _, err := s.FindThreadByID(ctx, "alice", "t"); return err }(),
			"VectorsVersion": func() error { _, err := s.VectorsVersion(ctx, "alice", "builtin"); return err }(),
		} {
			if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || !errors.Is(err, agentmem.ErrStoreDown) {
				t.Errorf("%s while the database is down: %v, want EUNAVAILABLE and ErrStoreDown", name, err)
			}
		}

		// PostgreSQL is reachable on that port now.
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("the port was taken meanwhile: %v", err)
		}
		defer ln.Close()
		go forward(ln, u.Host)
		select {
		case <-s.Ready():
		case <-time.After(30 * time.Second):
			t.Fatalf("not ready 30 s after the database came back: %v", s.Ping(ctx))
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping once ready: %v", err)
		}
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
			t.Fatalf("CreateThread once ready: %v", err)
		}
	})

	t.Run("StaysDown", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := *u
		down.Host = ln.Addr().String()
		ln.Close()
		s, err := postgres.OpenInBackground(ctx, down.String(), nil, fast)
		if err != nil {
			t.Fatal(err)
		}
		// Close stops the loop that connects: it returns, and the store
		// is closed.
		s.Close()
		if err := s.Ping(ctx); agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
			t.Errorf("Ping after Close: %v, want EUNAVAILABLE", err)
		}
	})

	t.Run("WrongPassword", func(t *testing.T) {
		bad := *u
		bad.User = url.UserPassword(u.User.Username(), "not-the-password")
		if s, err := postgres.OpenInBackground(ctx, bad.String(), nil, fast); err == nil {
			s.Close()
			t.Fatal("OpenInBackground with a wrong password: a store, want the error")
		}
	})
}

// forward accepts connections on ln and copies each to and from a new
// connection to target, until ln is closed.
func forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { io.Copy(up, c); up.Close() }()
			io.Copy(c, up)
		}()
	}
}
