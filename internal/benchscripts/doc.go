// Package benchscripts tests how the scripts in the repository's
// benchmarks folder take their arguments. The benchmarks folder holds
// harnesses and results but no test assertions (DESIGN.md), so their test
// lives here; the package has no code of its own.
package benchscripts
