package searchtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// shutdownGrace bounds how long Serve waits for in-flight requests after
// its context is cancelled.
const shutdownGrace = 5 * time.Second

// Serve answers HTTP requests on l with h (usually a *Server) until ctx is
// cancelled, then shuts down gracefully and returns nil. In-flight requests
// see their context cancelled with ctx, so injected latency ends at once.
// It is what `sluice devserver search` runs:
//
//	ln, err := net.Listen("tcp", addr)
//	...
//	srv := searchtest.NewServer(searchtest.Options{Key: key, FaultRate: f, Latency: d, RecordLimit: -1})
//	err = searchtest.Serve(ctx, ln, srv)
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	if s, ok := h.(*Server); ok && s.SpecError() != nil {
		l.Close()
		return fmt.Errorf("searchtest: %w", s.SpecError())
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("searchtest: serve %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("searchtest: shut down %s: %w", l.Addr(), err)
	}
	return nil
}
