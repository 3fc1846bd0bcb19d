package index_test

import (
	"context"
)

var ctx = context.Background()
