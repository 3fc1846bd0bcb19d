package reflection_test

import (
	"context"
)

var ctx = context.Background()
