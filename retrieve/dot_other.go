//go:build !amd64

package retrieve

// hasDotAVX is false: only amd64 has the assembly kernel.
const hasDotAVX = false

func dotAVX(a *float32, b *int8, n int) float32 { panic("unreachable") }
