// Package core is agentmem's application core: every use case once, as
// the methods of Service (agentmem.Service), over the stores, the context
// builder (window), search (retrieve), indexing (index), reflection
// (reflection) and profiles (profile).
// The faces (the REST API, the OpenAI-compatible proxy, the MCP server,
// the command line, the idle sweep) decode, call one method, encode;
// package app wires a Service to its store, model and workers.
//
// Who may reach whose data is decided here, once: the identity in ctx
// (agentmem.IdentityFromContext) and the user ID the caller gives are
// resolved to the stored user ID by Service.resolve, and user IDs go back
// to the caller as the caller names them.
package core

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/window"
)

// Options are a Service's collaborators and limits. The zero value works:
// New fills in a context builder with the default policy, a full-text
// searcher, and a profiler without a model; without an Indexer nothing is
// indexed (messages are still found by full-text search), without a
// Reflector ended threads are not reflected on.
type Options struct {
	Log      *slog.Logger
	Window   *window.Builder
	Searcher *retrieve.Searcher
	// Indexer queues the indexing of appended messages and embeds the
	// memories clients write.
	Indexer   *index.Indexer
	Reflector *reflection.Reflector
	Profiler  *profile.Profiler
	// Chat answers Facts questions, choosing where they search when they
	// do not say (nil: the facts of the default scopes are listed);
	// ChatModel names its model ("" for its default).
	Chat      agentmem.Chat
	ChatModel string
	// FactsMinScore is the min_score of a Facts question that gives none
	// (0: every fact search finds).
	FactsMinScore float64
	// Admitter bounds the imports and exports that run at once
	// (WorkBulk), and the searches (WorkSearch) of the Searcher that New
	// makes when Searcher is nil; a Searcher given is bounded by its own
	// Options.Admit (app wires it to the same Admitter). Nil: no bound.
	Admitter *Admitter
	// MaxBatchMessages bounds the messages of one append
	// (agentmem.MaxBatchMessages when 0, which is also the most allowed).
	MaxBatchMessages int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service implements agentmem.Service over a store. It is safe for
// concurrent use.
type Service struct {
	store agentmem.Store
	opt   Options
	log   *slog.Logger
}

var _ agentmem.Service = (*Service)(nil)

// New returns the service over store.
func New(store agentmem.Store, opt Options) *Service {
	opt.Log = agentmem.LoggerOr(opt.Log)
	if opt.Window == nil {
		opt.Window = window.New(store, store, window.Options{})
	}
	if opt.Searcher == nil {
		opt.Searcher = retrieve.New(store, nil, "", retrieve.Options{Log: opt.Log, Admit: opt.Admitter.SearchAdmit()})
	}
	if opt.Profiler == nil {
		opt.Profiler = &profile.Profiler{Store: store, Log: opt.Log}
	}
	opt.MaxBatchMessages = min(cmp.Or(opt.MaxBatchMessages, agentmem.MaxBatchMessages), agentmem.MaxBatchMessages)
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Service{store: store, opt: opt, log: opt.Log}
}

// Store returns the service's store, for what is not a use case (health
// checks, metrics).
func (s *Service) Store() agentmem.Store { return s.store }

// Ready implements agentmem.AdminService: the store answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }

// ContextCacheStats reports how many context builds the builder's cache
// answered (hits) and how many it built (misses), for metrics.
func (s *Service) ContextCacheStats() (hits, misses uint64) { return s.opt.Window.CacheStats() }

// JobBacklog reports the background work waiting, by kind of job: how many
// jobs are queued or running and when the oldest was enqueued (an
// operator's view, for metrics).
func (s *Service) JobBacklog(ctx context.Context) ([]agentmem.JobBacklog, error) {
	return s.store.FindJobBacklog(ctx)
}

// IndexShedding reports whether indexing sheds its optional work now,
// being far behind (index.Indexer.ShedBacklog): for metrics.
func (s *Service) IndexShedding() bool { return s.opt.Indexer.Shedding() }

// ExtractionFallbacks returns how many batches of turns were extracted
// without the model, because it failed and because it answered
// malformed (see index.Indexer.ExtractionFallbacks).
func (s *Service) ExtractionFallbacks() (failed, malformed int64) {
	if s.opt.Indexer == nil {
		return 0, 0
	}
	return s.opt.Indexer.ExtractionFallbacks()
}

// IndexStageCosts returns the time the index jobs have spent in each of
// their stages since the start, and the messages they indexed (see
// index.Indexer.StageCosts): for metrics.
func (s *Service) IndexStageCosts() ([]index.StageCost, int64) {
	return s.opt.Indexer.StageCosts()
}

// user is a user as the store keeps them (id) and as the caller names
// them (name).
type user struct {
	id   string
	name string
}

// AddressPrefix starts an admin's address of a tenant's user:
// "tenant:TENANT/user:USER".
const (
	tenantPrefix = "tenant:"
	userPrefix   = "user:"
)

// resolve returns the user the caller of ctx calls userID, or ENOTFOUND
// when the caller may not reach them (the answer for a user who does not
// exist), or EINVALID for a malformed or reserved ID (see
// agentmem.ValidateClientID: agentmem's own records, such as
// reembed.SystemUser's jobs, are no caller's to reach, in process
// neither).
//
//   - no identity (in process) or an admin: userID itself, or for
//     "tenant:T/user:U" the user U of tenant T;
//   - a tenant T: the user userID of T;
//   - a user: userID must be that user.
func (s *Service) resolve(ctx context.Context, userID string) (user, error) {
	id := agentmem.IdentityFromContext(ctx)
	if id == nil || id.Scope.Kind == agentmem.ScopeAdmin {
		if rest, ok := strings.CutPrefix(userID, tenantPrefix); ok {
			tenant, u, ok := strings.Cut(rest, "/")
			u, hasUser := strings.CutPrefix(u, userPrefix)
			if !ok || !hasUser {
				return user{}, agentmem.Errorf(agentmem.EINVALID, "user_id %q must be a user ID or tenant:TENANT/user:USER.", userID)
			}
			if err := agentmem.ValidateClientID("tenant", tenant); err != nil {
				return user{}, err
			}
			if err := agentmem.ValidateClientID("user_id", u); err != nil {
				return user{}, err
			}
			return user{id: tenant + "/" + u, name: userID}, nil
		}
		if err := agentmem.ValidateClientID("user_id", userID); err != nil {
			return user{}, err
		}
		return user{id: userID, name: userID}, nil
	}
	if err := agentmem.ValidateClientID("user_id", userID); err != nil {
		return user{}, err
	}
	sc := id.Scope
	switch {
	case sc.Kind == agentmem.ScopeTenant:
	case sc.Kind == agentmem.ScopeUser && sc.UserID == userID:
	default:
		return user{}, agentmem.Errorf(agentmem.ENOTFOUND, "User %q not found.", userID)
	}
	return user{id: sc.StoredUserID(userID), name: userID}, nil
}

// nameOf returns how the caller of ctx names the stored user storedID:
// a tenant's user without the tenant, and for an admin a tenant's user
// as "tenant:T/user:U".
func nameOf(ctx context.Context, storedID string) string {
	tenant, u, ok := strings.Cut(storedID, "/")
	if !ok {
		return storedID
	}
	if id := agentmem.IdentityFromContext(ctx); id != nil && id.Scope.TenantID == tenant {
		return u
	}
	return tenantPrefix + tenant + "/" + userPrefix + u
}

// WhoAmI implements agentmem.UserService.
func (s *Service) WhoAmI(ctx context.Context) (*agentmem.Caller, error) {
	return agentmem.CallerOf(agentmem.IdentityFromContext(ctx)), nil
}

// admin returns EFORBIDDEN unless the caller of ctx is an admin (or the
// in-process owner).
func admin(ctx context.Context) error {
	if id := agentmem.IdentityFromContext(ctx); id != nil && id.Scope.Kind != agentmem.ScopeAdmin {
		return agentmem.Errorf(agentmem.EFORBIDDEN, "This needs an admin key.")
	}
	return nil
}

// show sets the user IDs of v, a result of the store, to the name the
// caller gave.
func (u user) show(v any) {
	switch v := v.(type) {
	case *agentmem.Thread:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Thread:
		for _, x := range v {
			x.UserID = u.name
		}
	case *agentmem.Session:
		if v != nil {
			v.UserID = u.name
		}
	case *agentmem.Memory:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Memory:
		for _, x := range v {
			x.UserID = u.name
		}
	case *agentmem.Notes:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Notes:
		for _, x := range v {
			x.UserID = u.name
		}
	case *agentmem.Profile:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Profile:
		for _, x := range v {
			x.UserID = u.name
		}
	case *agentmem.Entity:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Entity:
		for _, x := range v {
			x.UserID = u.name
		}
	case []*agentmem.EntityRef:
		for _, x := range v {
			u.show(x.Entity)
		}
	case *agentmem.Reflection:
		if v != nil {
			v.UserID = u.name
		}
	case *agentmem.ThreadExport:
		if v != nil {
			u.show(v.Thread)
		}
	case *agentmem.Job:
		if v != nil {
			v.UserID = u.name
		}
	case []*agentmem.Job:
		for _, x := range v {
			x.UserID = u.name
		}
	}
}

// audit records an operator-visible action; a failure is logged, since
// the action itself is done.
func (s *Service) audit(ctx context.Context, action string, u user, target string, detail any) {
	id := agentmem.IdentityFromContext(ctx)
	e := &agentmem.AuditEvent{Actor: actor(id), Action: action, UserID: u.id, Target: target}
	if tenant, name, ok := strings.Cut(u.id, "/"); ok {
		e.TenantID, e.UserID = tenant, name
	}
	if detail != nil {
		if b, err := jsonMarshal(detail); err == nil {
			e.Detail = b
		}
	}
	if err := s.store.CreateAuditEvent(ctx, e); err != nil {
		s.log.ErrorContext(ctx, "audit event not recorded", "action", action, agentmem.LogErr, err)
	}
}

// actor names the caller in the audit log: "cli" in process.
func actor(id *agentmem.Identity) string {
	if id == nil {
		return "cli"
	}
	return id.Actor()
}
