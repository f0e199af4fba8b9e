package cloudsearch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/sink"
)

// scriptedTransport answers the requests it is sent from a script, one
// step per request (the last step repeats): a transport error, or an
// answer with a status. It counts the requests.
type scriptedTransport struct {
	steps []step
	sent  atomic.Int32
}

// step is one answer of a scriptedTransport: err when set, else status.
type step struct {
	err    error
	status int
}

func (s *scriptedTransport) Do(req *http.Request) (*http.Response, error) {
	n := int(s.sent.Add(1)) - 1
	st := s.steps[min(n, len(s.steps)-1)]
	if st.err != nil {
		return nil, st.err
	}
	return &http.Response{StatusCode: st.status, Status: fmt.Sprintf("%d %s", st.status, http.StatusText(st.status)), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{"error":{"code":"","message":"busy"}}`)), Request: req}, nil
}

// dialError is what net/http's transport returns when the dial fails with
// errno.
func dialError(errno syscall.Errno) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443},
		Err: &os.SyscallError{Syscall: "connect", Err: errno}}
}

// timeoutError is a net.Error that timed out, as a read past a deadline.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// warnLines returns the lines of a text log at level WARN.
func warnLines(log string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "level=WARN") {
			out = append(out, sc.Text())
		}
	}
	return out
}

// TestNoAnswerRetries checks how often a request that got no answer is
// sent, by cause, that each retry is logged as a warning naming the
// endpoint, the attempt and the wait, and what the final error says: a
// host name that does not resolve and a certificate that does not verify
// are not retried, a refused connection at most twice, anything else
// (timeouts, resets, a DNS server that failed) the whole maxRetries.
func TestNoAnswerRetries(t *testing.T) {
	const endpoint = "https://svc.search.windows.net"
	all := DefaultMaxRetries + 1
	tests := []struct {
		name       string
		err        error
		maxRetries int
		attempts   int      // requests sent
		words      []string // in the final error
	}{
		{"no such host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "svc.search.windows.net", IsNotFound: true}},
			0, 1, []string{"does not resolve", "not retried", "sink.cloudsearch.endpoint", "reachable", "sink.cloudsearch.timeout"}},
		{"DNS server failure", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "svc.search.windows.net", IsTemporary: true}},
			0, all, []string{fmt.Sprintf("after %d attempts", all), "server misbehaving"}},
		{"certificate", x509.UnknownAuthorityError{}, 0, 1, []string{"certificate does not verify", "not retried"}},
		{"connection refused", dialError(syscall.ECONNREFUSED), 0, refusedRetries + 1, []string{"after 3 attempts", "nothing accepts connections", "reachable"}},
		{"connection refused, one retry", dialError(syscall.ECONNREFUSED), 1, 2, []string{"after 2 attempts", "connection refused"}},
		{"connection refused, no retries", dialError(syscall.ECONNREFUSED), NoRetries, 1, []string{"connection refused"}},
		{"connection reset", dialError(syscall.ECONNRESET), 0, all, []string{fmt.Sprintf("after %d attempts", all), "connection reset"}},
		{"timeout", timeoutError{}, 2, 3, []string{"after 3 attempts", "i/o timeout", "sink.cloudsearch.timeout (now 1m0s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &scriptedTransport{steps: []step{{err: tt.err}}}
			cfg := testConfig(endpoint)
			cfg.IndexManagement, cfg.MaxRetries = NoValidation, tt.maxRetries
			s, log := loggedStore(t, cfg, WithTransport(tr))
			_, err := s.ListIndexes(context.Background())
			var ce *ConnectionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConnection) || !errors.Is(err, sink.ErrUnavailable) {
				t.Fatalf("ListIndexes() = %v, want a *ConnectionError", err)
			}
			if got := int(tr.sent.Load()); got != tt.attempts || ce.Attempts != tt.attempts {
				t.Errorf("%d requests sent, error says %d attempts; want %d", got, ce.Attempts, tt.attempts)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			warns := warnLines(log.String())
			if len(warns) != tt.attempts-1 {
				t.Fatalf("%d warnings, want one per retry (%d):\n%s", len(warns), tt.attempts-1, log.String())
			}
			for i, w := range warns {
				for _, want := range []string{"list indexes: no answer from " + endpoint, "retrying in ", fmt.Sprintf("(attempt %d of %d)", i+2, tt.attempts)} {
					if !strings.Contains(w, want) {
						t.Errorf("warning %q lacks %q", w, want)
					}
				}
			}
		})
	}
}

// TestNoAnswerWarningNamesTimeout checks the warning of an attempt that ran
// past sink.cloudsearch.timeout: it names the setting and its value.
func TestNoAnswerWarningNamesTimeout(t *testing.T) {
	tr := &scriptedTransport{steps: []step{{err: timeoutError{}}, {status: http.StatusOK}}}
	cfg := testConfig("https://svc.search.windows.net")
	cfg.IndexManagement, cfg.Timeout = NoValidation, 45*time.Second
	s, log := loggedStore(t, cfg, WithTransport(tr))
	if _, err := s.ListIndexes(context.Background()); err != nil {
		t.Fatalf("ListIndexes() = %v, want the retry answered", err)
	}
	warns := warnLines(log.String())
	if len(warns) != 1 || !strings.Contains(warns[0], "no answer from https://svc.search.windows.net within 45s (sink.cloudsearch.timeout); retrying in") {
		t.Errorf("warnings %q, want one naming the timeout", warns)
	}
}

// TestNoAnswerSharesTheRetryBudget checks that the retries of a request
// that got no answer and those of its throttled answers share one budget,
// maxRetries, and that only the former are warned about: throttling is
// still retried by azcore's policy, honouring Retry-After, in silence.
func TestNoAnswerSharesTheRetryBudget(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		warns int
		is    error
	}{
		{"reset, then throttled", []step{{err: dialError(syscall.ECONNRESET)}, {status: http.StatusServiceUnavailable}}, 1, ErrThrottled},
		{"throttled, then reset", []step{{status: http.StatusTooManyRequests}, {status: http.StatusTooManyRequests}, {err: dialError(syscall.ECONNRESET)}}, 1, ErrConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &scriptedTransport{steps: tt.steps}
			cfg := testConfig("https://svc.search.windows.net")
			cfg.IndexManagement, cfg.MaxRetries = NoValidation, 3
			s, log := loggedStore(t, cfg, WithTransport(tr))
			_, err := s.ListIndexes(context.Background())
			if !errors.Is(err, tt.is) {
				t.Fatalf("ListIndexes() = %v, want %v", err, tt.is)
			}
			if n := tr.sent.Load(); n != int32(cfg.MaxRetries+1) {
				t.Errorf("%d requests sent, want maxRetries+1 = %d", n, cfg.MaxRetries+1)
			}
			if w := warnLines(log.String()); len(w) != tt.warns {
				t.Errorf("%d warnings, want %d (one per retry after no answer):\n%s", len(w), tt.warns, log.String())
			}
		})
	}
}

// loggedStore returns a Store over cfg whose retries wait a millisecond,
// whose key is testKey and whose warnings go to the buffer returned.
func loggedStore(t *testing.T, cfg Config, transport Option) (*Store, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	s, err := New(context.Background(), cfg, transport, WithRetryDelay(time.Millisecond),
		WithGetenv(envOf(map[string]string{EnvKey: testKey})), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	return s, &log
}

// TestNoAnswerClosedPort sends to a port where nothing listens: the
// connection is refused, retried at most twice, each retry warned about.
func TestNoAnswerClosedPort(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1")
	cfg.IndexManagement = NoValidation
	s, log := loggedStore(t, cfg, testHTTP(t))
	_, err := s.GetIndex(context.Background())
	var ce *ConnectionError
	if !errors.As(err, &ce) || ce.Attempts != refusedRetries+1 || !refused(err) {
		t.Fatalf("GetIndex() = %v, want a *ConnectionError after %d attempts", err, refusedRetries+1)
	}
	warns := warnLines(log.String())
	if len(warns) != refusedRetries || !strings.Contains(warns[0], "no answer from http://127.0.0.1:1: dial tcp 127.0.0.1:1: ") || !strings.Contains(warns[0], "; retrying in") {
		t.Errorf("warnings %q, want %d naming the endpoint and the refusal", warns, refusedRetries)
	}
}

// TestNoAnswerWarningRedacted has a server answer with a status line whose
// status code is the key the request sent, which Go's transport quotes in
// its error, so that every attempt fails with the key in the transport's
// error: neither the warnings of the retries nor the error show it.
func TestNoAnswerWarningRedacted(t *testing.T) {
	const secret = "WARNSECRET-0123456789abcdef"
	cfg := testConfig(keyEchoServer(t))
	cfg.IndexManagement, cfg.MaxRetries = NoValidation, 2
	var log bytes.Buffer
	s, err := New(context.Background(), cfg, testHTTP(t), WithRetryDelay(time.Millisecond), WithGetenv(envOf(map[string]string{EnvKey: secret})),
		WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetIndex(context.Background())
	if !errors.Is(err, ErrConnection) {
		t.Fatalf("GetIndex() = %v, want a *ConnectionError", err)
	}
	warns := warnLines(log.String())
	if len(warns) != 2 || !strings.Contains(warns[0], "malformed HTTP") {
		t.Fatalf("warnings %q, want 2 quoting the transport's error:\n%s", warns, log.String())
	}
	for name, out := range map[string]string{"error": err.Error(), "log": log.String()} {
		if part := testenv.SecretRun(out, secret); part != "" {
			t.Errorf("the %s shows %q of the key: %s", name, part, out)
		}
	}
}

// TestFailedRequestSaidOnce: when a write's request gets no answer, the
// error lists the documents it failed (a *sink.WriteError: "not written"
// for Add, "not deleted" for DeleteNodes) and says the request's error
// once, while errors.Is still finds the request's sentinels.
func TestFailedRequestSaidOnce(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1")
	cfg.IndexManagement = NoValidation
	s, _ := loggedStore(t, cfg, testHTTP(t))
	nodes := makeNodes("a.md", 3)
	_, addErr := s.Add(context.Background(), nodes)
	delErr := s.DeleteNodes(context.Background(), nodeIDs(nodes))
	for _, tt := range []struct {
		name string
		err  error
		says string
		op   string
	}{
		{"Add", addErr, "sink: 3 nodes not written, e.g. ", "cloudsearch: upload documents: no answer from"},
		{"DeleteNodes", delErr, "sink: 3 nodes not deleted, e.g. ", "cloudsearch: delete documents: no answer from"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var we *sink.WriteError
			if !errors.As(tt.err, &we) || len(we.Failed) != 3 || !errors.Is(tt.err, ErrConnection) || !errors.Is(tt.err, sink.ErrUnavailable) {
				t.Fatalf("%s = %v; want a *sink.WriteError of the 3 nodes, ErrConnection and sink.ErrUnavailable", tt.name, tt.err)
			}
			msg := tt.err.Error()
			if !strings.HasPrefix(msg, tt.says) || !strings.Contains(msg, tt.op) {
				t.Errorf("%s = %s\nwant it to begin %q and say %q", tt.name, msg, tt.says, tt.op)
			}
			if n := strings.Count(msg, "no answer from"); n != 1 {
				t.Errorf("%s = %s\nsays %d times that there was no answer, want once", tt.name, msg, n)
			}
		})
	}
}
