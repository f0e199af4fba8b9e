package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// cutKind is how cutAnswers cuts an answer short.
type cutKind int

const (
	// cutWithLength announces the whole body's Content-Length, sends half
	// of it and closes the connection: the client's read of the body fails
	// (unexpected EOF), as after a reset mid-body.
	cutWithLength cutKind = iota
	// cutWithoutLength announces no length and "Connection: close", sends
	// half of the body and closes: a well-formed HTTP/1.1 answer whose JSON
	// body ends in the middle.
	cutWithoutLength
)

// cutAnswers serves h, but cuts short the answers of the first n POST
// requests to a path ending in suffix, as kind says, after h has handled
// them (an upload is applied; only its answer is lost).
func cutAnswers(t *testing.T, h http.Handler, suffix string, n int32, kind cutKind) (url string, cut *atomic.Int32) {
	t.Helper()
	cut = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, suffix) || cut.Add(1) > n {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", rec.Code, http.StatusText(rec.Code), rec.Header().Get("Content-Type"))
		if kind == cutWithLength {
			buf.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
		} else {
			buf.WriteString("Connection: close\r\n")
		}
		buf.WriteString("\r\n")
		buf.Write(body[:len(body)/2])
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, cut
}

// TestCutAnswersRetried checks that an answer cut short mid-body, to an
// upload (a POST, which azcore's body download policy would not retry) or
// to a search, is retried like a request that got no answer, with a
// warning: every node lands once and the read succeeds. Before, the
// upload failed at once (a reset or a short body), or failed its
// documents (a body that ended mid-JSON).
func TestCutAnswersRetried(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind cutKind
		says string
	}{
		{"body shorter than its length", cutWithLength, "unexpected EOF"},
		{"JSON cut without a length", cutWithoutLength, "malformed answer: the body of the 200 answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := searchtest.NewServer(searchtest.Options{Key: testKey})
			url, cut := cutAnswers(t, h, "/docs/index", 2, tt.kind)
			cfg := testConfig(url)
			cfg.UploadBatchSize, cfg.UploadConcurrency = 4, 1
			s, log := loggedStore(t, cfg, testHTTP(t))
			nodes := makeNodes("a.md", 12)
			ids, err := s.Add(context.Background(), nodes)
			if err != nil {
				t.Fatalf("Add() = %v, want the cut answers retried", err)
			}
			if len(ids) != len(nodes) || cut.Load() < 3 {
				t.Fatalf("%d ids acknowledged after %d uploads; want %d, and 2 answers cut", len(ids), cut.Load(), len(nodes))
			}
			assertStored(t, h, nodes)
			warns := warnLines(log.String())
			if len(warns) != 2 || !strings.Contains(warns[0], "upload documents: no answer from "+url+": "+tt.says) {
				t.Errorf("warnings %q, want 2 saying %q", warns, tt.says)
			}

			rurl, rcut := cutAnswers(t, h, "/docs/search", 1, tt.kind)
			rs, _ := loggedStore(t, testConfig(rurl), testHTTP(t))
			got, err := rs.GetNodes(context.Background(), nodeIDs(nodes[:3]), nil, 0)
			if err != nil || len(got) != 3 || rcut.Load() != 2 {
				t.Errorf("GetNodes() = %d nodes, %v after %d searches; want 3 nodes, the cut answer retried", len(got), err, rcut.Load())
			}
		})
	}
}

// TestCutAnswersUsedUp checks that a search whose every answer is cut
// short fails, once maxRetries is used up, with a *ConnectionError (the
// service out of reach: the run stops), not a decoding error.
func TestCutAnswersUsedUp(t *testing.T) {
	for _, kind := range []cutKind{cutWithLength, cutWithoutLength} {
		h := searchtest.NewServer(searchtest.Options{Key: testKey})
		url, cut := cutAnswers(t, h, "/docs/index", 1000, kind)
		cfg := testConfig(url)
		cfg.MaxRetries = 2
		s, _ := loggedStore(t, cfg, testHTTP(t))
		_, err := s.Add(context.Background(), makeNodes("a.md", 3))
		var ce *ConnectionError
		if !errors.As(err, &ce) || !errors.Is(err, sink.ErrUnavailable) || ce.Attempts != 3 || cut.Load() != 3 {
			t.Errorf("kind %d: Add() = %v after %d uploads; want a *ConnectionError after 3 attempts", kind, err, cut.Load())
		}
	}
}
