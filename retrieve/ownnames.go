package retrieve

import (
	"context"
	"sync"
	"time"
)

// namesTTL is how long a searcher keeps a user's own names
// (Options.OwnNames): reading them is a query of the store (half a
// millisecond on SQLite), which every search and context build would
// otherwise pay; a name the user just gave is searched as "they" within
// a minute.
const namesTTL = time.Minute

// maxNamesCached bounds the users whose names a searcher keeps; past it,
// it starts again empty.
const maxNamesCached = 10000

// namesCache keeps users' own names for namesTTL.
type namesCache struct {
	mu    sync.Mutex
	users map[string]cachedNames
}

type cachedNames struct {
	names []string
	at    time.Time
}

// get returns the user's names from the cache, or from load (and keeps
// them).
func (c *namesCache) get(ctx context.Context, userID string, load func(context.Context, string) ([]string, error)) ([]string, error) {
	c.mu.Lock()
	n, ok := c.users[userID]
	c.mu.Unlock()
	if ok && time.Since(n.at) < namesTTL {
		return n.names, nil
	}
	names, err := load(ctx, userID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.users == nil || len(c.users) >= maxNamesCached {
		c.users = map[string]cachedNames{}
	}
	c.users[userID] = cachedNames{names, time.Now()}
	return names, nil
}

// forget drops the user's names.
func (c *namesCache) forget(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.users, userID)
}
