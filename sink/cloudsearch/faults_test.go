package cloudsearch

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// sentKeys counts how often each key was sent in docs/index requests.
func sentKeys(t *testing.T, srv *searchtest.Server) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, r := range srv.Requests() {
		if !strings.HasSuffix(r.Path, "/docs/index") || len(r.Body) == 0 {
			continue // the server does not record bodies it refused unread
		}
		var batch struct {
			Value []map[string]any `json:"value"`
		}
		if err := json.Unmarshal(r.Body, &batch); err != nil {
			t.Fatal(err)
		}
		for _, d := range batch.Value {
			counts[d["id"].(string)]++
		}
	}
	return counts
}

func TestFaultsEveryNodeLandsOnce(t *testing.T) {
	tests := []struct {
		name   string
		script func(srv *searchtest.Server, nodes []sink.Node)
		mutate func(*Config)
		// maxSends bounds how often any key may be sent (no re-sending of
		// acknowledged documents).
		maxSends int
	}{
		{"429 storm", func(srv *searchtest.Server, _ []sink.Node) {
			srv.FailNext(4, http.StatusTooManyRequests, 2*time.Millisecond)
		}, nil, 5},
		{"503 storm", func(srv *searchtest.Server, _ []sink.Node) {
			srv.FailNext(4, http.StatusServiceUnavailable, time.Millisecond)
		}, nil, 5},
		{"partial 207", func(srv *searchtest.Server, n []sink.Node) {
			srv.FailKeys(http.StatusConflict, 2, n[0].ID, n[7].ID)
			srv.FailKeys(http.StatusUnprocessableEntity, 1, n[3].ID)
			srv.FailKeys(http.StatusServiceUnavailable, 3, n[9].ID)
		}, func(c *Config) { c.UploadBatchSize = 5 }, 4},
		{"413 splits", func(srv *searchtest.Server, _ []sink.Node) { srv.SetMaxBatchBytes(6000) }, nil, 1},
		{"mixed", func(srv *searchtest.Server, n []sink.Node) {
			srv.FailNext(2, http.StatusTooManyRequests, time.Millisecond)
			srv.FailKeys(http.StatusServiceUnavailable, 2, n[1].ID, n[11].ID)
			srv.SetMaxBatchBytes(9000)
		}, func(c *Config) { c.UploadConcurrency = 3 }, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := startStore(t, searchtest.Options{}, tt.mutate)
			nodes := makeNodes("a.md", 12)
			tt.script(srv, nodes)
			ids, err := s.Add(context.Background(), nodes)
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			if len(ids) != len(nodes) {
				t.Errorf("%d ids acknowledged, want %d", len(ids), len(nodes))
			}
			assertStored(t, srv, nodes)
			for k, n := range sentKeys(t, srv) {
				if n > tt.maxSends {
					t.Errorf("key %s sent %d times, want at most %d", k, n, tt.maxSends)
				}
			}
		})
	}
}

func TestFaultsPermanentReported(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	nodes := makeNodes("a.md", 6)
	srv.FailKeys(http.StatusBadRequest, 1, nodes[2].ID)
	srv.FailKeys(http.StatusConflict, 100, nodes[4].ID) // retryable, but never succeeds
	ids, err := s.Add(context.Background(), nodes)
	var we *sink.WriteError
	if !errors.As(err, &we) || !errors.Is(err, sink.ErrWrite) {
		t.Fatalf("err = %v, want *sink.WriteError", err)
	}
	if len(we.Failed) != 2 {
		t.Fatalf("Failed = %v, want nodes 2 and 4", we.Failed)
	}
	var de *DocumentError
	if !errors.As(we.Failed[nodes[2].ID], &de) || de.StatusCode != http.StatusBadRequest || de.Retryable() {
		t.Errorf("node 2: %v, want a permanent 400 DocumentError", we.Failed[nodes[2].ID])
	}
	if !errors.As(we.Failed[nodes[4].ID], &de) || de.StatusCode != http.StatusConflict || de.Attempts != s.cfg.MaxRetries+1 {
		t.Errorf("node 4: %+v, want a 409 DocumentError after %d attempts", we.Failed[nodes[4].ID], s.cfg.MaxRetries+1)
	}
	if len(ids) != 4 {
		t.Errorf("%d ids acknowledged, want 4", len(ids))
	}
	// Acknowledged plus reported is every node: nothing dropped silently.
	reported := map[string]bool{}
	for _, id := range ids {
		reported[id] = true
	}
	for id := range we.Failed {
		reported[id] = true
	}
	for _, n := range nodes {
		if !reported[n.ID] {
			t.Errorf("node %s neither acknowledged nor reported", n.ID)
		}
	}
}

func TestFaultsOversizedDocumentReported(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	nodes := makeNodes("a.md", 3)
	nodes[1].Text = strings.Repeat("long text ", 1000)
	srv.SetMaxBatchBytes(8000)
	_, err := s.Add(context.Background(), nodes)
	var we *sink.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 {
		t.Fatalf("err = %v, want node 1 reported", err)
	}
	if msg := we.Failed[nodes[1].ID].Error(); !strings.Contains(msg, "413") || !strings.Contains(msg, "chunkSize") {
		t.Errorf("message %q should give the status and how to fix it", msg)
	}
	assertStored(t, srv, []sink.Node{nodes[0], nodes[2]})
}

func TestFaultsThrottledPastRetries(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, func(c *Config) { c.MaxRetries = 2 })
	srv.FailNext(10, http.StatusTooManyRequests, time.Millisecond)
	nodes := makeNodes("a.md", 3)
	_, err := s.Add(context.Background(), nodes)
	if !errors.Is(err, ErrThrottled) || !errors.Is(err, sink.ErrWrite) {
		t.Fatalf("err = %v, want ErrThrottled and sink.ErrWrite", err)
	}
	if !strings.Contains(err.Error(), "uploadConcurrency") {
		t.Errorf("message %q should say how to relieve throttling", err)
	}
}

func TestFaultsRandomRate(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{FaultRate: 0.3, Seed: 7, SpecDir: noSpec}, func(c *Config) {
		c.UploadBatchSize = 10
		c.MaxRetries = 10
	})
	nodes := makeNodes("a.md", 200)
	if _, err := s.Add(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	assertStored(t, srv, nodes)
}

func TestPackBatches(t *testing.T) {
	doc := func(n int) encodedDoc { return encodedDoc{key: "k", json: make([]byte, n)} }
	docs := []encodedDoc{doc(10), doc(10), doc(10), doc(50), doc(10)}
	tests := []struct {
		name            string
		maxDocs, maxLen int
		want            []int
	}{
		{"count", 2, 1000, []int{2, 2, 1}},
		{"bytes", 1000, batchOverhead + 21, []int{2, 1, 1, 1}},
		{"oversized alone", 1000, batchOverhead + 40, []int{3, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batches := packBatches(docs, tt.maxDocs, tt.maxLen)
			var sizes []int
			for _, b := range batches {
				sizes = append(sizes, len(b))
				if len(b) > 1 && len(encodeBatch(b)) > tt.maxLen {
					t.Errorf("batch of %d encodes to %d bytes > %d", len(b), len(encodeBatch(b)), tt.maxLen)
				}
			}
			if len(sizes) != len(tt.want) {
				t.Fatalf("batch sizes %v, want %v", sizes, tt.want)
			}
			for i := range sizes {
				if sizes[i] != tt.want[i] {
					t.Fatalf("batch sizes %v, want %v", sizes, tt.want)
				}
			}
		})
	}
}

func TestAddCancelled(t *testing.T) {
	// The server's latency is short because the test server only notices a
	// cancelled request after its delay, and its Close waits for it.
	s, _ := startStore(t, searchtest.Options{Latency: time.Second, SpecDir: noSpec}, func(c *Config) { c.IndexManagement = NoValidation })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Add(ctx, makeNodes("a.md", 3))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sink.ErrWrite) {
		t.Fatalf("err = %v, want context.DeadlineExceeded and sink.ErrWrite", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Add took %v after cancellation", time.Since(start))
	}
}

// TestRetryAfterBeyondMaxRetryWait throttles with a Retry-After longer than
// MaxRetryWait: the request is not retried (waiting that long is not this
// run's to decide), and the error carries the hint and says so rather than
// advising more retries, which would not help.
func TestRetryAfterBeyondMaxRetryWait(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	srv.FailNext(1, http.StatusServiceUnavailable, MaxRetryWait+time.Minute)
	before := len(srv.Requests())
	_, err := s.Add(context.Background(), makeNodes("a.md", 2))
	var se *ServiceError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable || se.RetryAfter != MaxRetryWait+time.Minute {
		t.Fatalf("Add = %v, want a *ServiceError 503 carrying RetryAfter %s", err, MaxRetryWait+time.Minute)
	}
	if msg := err.Error(); !strings.Contains(msg, "asked to wait 11m0s") || strings.Contains(msg, "raise maxRetries") {
		t.Errorf("error %q, want it to give the asked wait and not advise raising maxRetries", msg)
	}
	if n := len(srv.Requests()) - before; n != 1 {
		t.Errorf("%d requests sent, want 1 (no retry)", n)
	}
}
