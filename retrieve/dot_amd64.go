package retrieve

import "golang.org/x/sys/cpu"

// hasDotAVX reports whether the CPU (and the OS) run AVX2 and FMA, which
// dotAVX needs.
var hasDotAVX = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX returns Σ a[i] × b[i] for i < n, a multiple of 32 (dot_amd64.s).
//
//go:noescape
func dotAVX(a *float32, b *int8, n int) float32
