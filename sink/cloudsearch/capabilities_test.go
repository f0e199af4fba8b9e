package cloudsearch

import "github.com/sluice-dev/sluice/pipeline"

// The pipeline finds these optional capabilities by type assertion; a
// renamed method would silently turn them off.
var (
	_ pipeline.Writer          = (*Store)(nil)
	_ pipeline.EmptyReporter   = (*Store)(nil)
	_ pipeline.SettlingCounter = (*Store)(nil)
	_ pipeline.NodeScanner     = (*Store)(nil)
	_ pipeline.NodeChecker     = (*Store)(nil)
	_ pipeline.DocsDeleter     = (*Store)(nil)
)
