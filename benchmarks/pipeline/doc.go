// Package pipelinebench holds the Go benchmarks of the whole Sluice
// pipeline: reading, splitting, batching and writing with an instant
// embedder, against splitting alone and tokenizing alone, the same corpus
// on the same cores: the steps between them show what each stage costs.
// BenchmarkTokenizeLibrary counts the same corpus with the tiktoken-go
// library, for scale.
//
//	go test -run '^$' -bench . -benchtime 3x ./benchmarks/pipeline/
//	SLUICE_BENCH_CORPUS=/tmp/corpus/10mb go test -run '^$' -bench . -benchtime 3x ./benchmarks/pipeline/
//
// Without SLUICE_BENCH_CORPUS the benchmarks build a synthetic corpus of
// about 4 MB. They read the corpus's *.md and *.txt files (the include of
// the benchmark scripts, wider than the default *.md), and MB/s counts the
// bytes of exactly those files. The package holds benchmarks only; the assertions live with
// the packages they test.
package pipelinebench
