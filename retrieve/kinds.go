package retrieve

import (
	"slices"
	"strings"

	"github.com/agentmem/agentmem"
)

// requestScopes returns the scopes a request searches: those of its kinds
// (memories and insights are both memories, told apart by memoryKind), or
// its scopes, or memories and messages when it gives neither. Returns
// EINVALID for an unknown kind, or scopes and kinds both given.
func requestScopes(r *Request) ([]string, error) {
	if len(r.Kinds) == 0 {
		if len(r.Scopes) == 0 {
			return []string{agentmem.ScopeMemories, agentmem.ScopeMessages}, nil
		}
		return r.Scopes, nil
	}
	if len(r.Scopes) > 0 {
		return nil, agentmem.Errorf(agentmem.EINVALID, "Give scopes or kinds, not both.")
	}
	var scopes []string
	for _, k := range r.Kinds {
		if !slices.Contains(agentmem.SearchKinds, k) {
			return nil, agentmem.Errorf(agentmem.EINVALID, "kinds must be among %s, not %q.", strings.Join(agentmem.SearchKinds, ", "), k)
		}
		if k == agentmem.KindInsights {
			k = agentmem.ScopeMemories
		}
		scopes = append(scopes, k) // the other kinds are scopes of the same name
	}
	return scopes, nil
}

// memoryKind returns the kind of memories that kinds (valid) keep: facts
// for memories without insights, insights without memories, nil for both
// or neither.
func memoryKind(kinds []string) *string {
	facts, insights := slices.Contains(kinds, agentmem.KindMemories), slices.Contains(kinds, agentmem.KindInsights)
	switch {
	case facts && !insights:
		k := agentmem.MemoryFact
		return &k
	case insights && !facts:
		k := agentmem.MemoryInsight
		return &k
	}
	return nil
}
