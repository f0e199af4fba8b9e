package cloudsearch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// Requests that get no answer.
//
// azcore's retry policy would retry every request that got no answer, the
// whole maxRetries budget, in silence, whatever the cause: an endpoint
// with a typo in its host name took 6 attempts and about 45 seconds per
// request before its error showed. The store takes these retries over
// (noAnswerPolicy hands such a failure back to Store.do at once), so that
// each retry is logged as a warning naming the endpoint, the cause, the
// attempt and the wait (never a key: the text is redacted like every
// error), and so that retries are in proportion to the cause:
//
//   - a host name that does not resolve (DNS "no such host") is not
//     retried. A search service's name resolves as long as the service
//     exists, so this is a typo in the endpoint, a service that was
//     deleted, or a private endpoint whose DNS zone this machine lacks;
//     none passes in seconds, and an operator wants the error at once;
//   - a TLS certificate that does not verify is not retried either: it is
//     the same on every attempt (a wrong host name, a TLS-inspecting proxy
//     whose CA this machine lacks), nor is a plain-HTTP answer to an
//     https:// endpoint (a local server, such as `sluice devserver search`,
//     given as https://);
//   - a refused connection is retried at most refusedRetries (2) times,
//     about two seconds. Cloud AI Search never refuses connections (its
//     front end always listens on 443), so a refusal means that nothing
//     listens at that address: a wrong port, or a server (a proxy, `sluice
//     devserver search`) not started, or restarting. The retries give a
//     restarting server a moment, and a wrong address fails in seconds,
//     not after the whole budget;
//   - anything else (an attempt that ran past sink.cloudsearch.timeout, a
//     connection reset or closed by a peer, a malformed answer) is
//     transient on a busy service or network, and is retried the whole
//     maxRetries budget, with exponential backoff from the retry delay
//     (WithRetryDelay, 0.8 s), as documents are (see newBackOff).
//
// Answers are not concerned: azcore's policy still retries 408, 429, 500,
// 502, 503 and 504, honouring Retry-After and retry-after-ms, as before.
// Both kinds of retry share one budget per request: maxRetries retries,
// maxRetries+1 attempts in all.
const refusedRetries = 2

// noAnswerPolicy runs after the retry policy, on every attempt, and hands
// a request that got no answer back to Store.do, which decides whether to
// retry it (see above), instead of letting azcore retry it. So does an
// answer that was cut short: a body whose download failed (a connection
// reset or closed mid-body), which azcore's body download policy marks as
// not to be retried for a POST, and a 2xx JSON answer whose body is not
// valid JSON (a connection closed mid-body by a proxy that had announced
// no length). Every POST the store sends may be sent again: an upload,
// merge or delete sets the same state twice, a search reads, and
// CreateIndex checks a 409 to a retried request. Another error that azcore
// would not retry (a credential's) is left as it is.
type noAnswerPolicy struct{}

// Do sends the request on and marks a transport failure.
func (noAnswerPolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil {
		if bad := malformedJSON(resp); bad != nil {
			return nil, permanentError{&noAnswerError{bad}}
		}
		return resp, nil
	}
	var nr interface{ NonRetriable() }
	if errors.As(err, &nr) {
		if resp == nil {
			return resp, err
		}
		// Only the body download policy, below this one, fails with an
		// answer in hand: its error wraps the reader's.
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
	}
	return nil, permanentError{&noAnswerError{err}}
}

// errMalformedAnswer is the cause of a 2xx answer that says it is JSON but
// whose body is not valid JSON.
var errMalformedAnswer = errors.New("malformed answer")

// malformedJSON returns an error wrapping errMalformedAnswer when resp is a
// 2xx answer whose Content-Type is JSON and whose (downloaded) body is not
// valid JSON, else nil.
func malformedJSON(resp *http.Response) error {
	if resp.StatusCode/100 != 2 || !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "application/json") {
		return nil
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return err
	}
	if len(body) == 0 || json.Valid(body) {
		return nil
	}
	return fmt.Errorf("%w: the body of the %d answer (%d bytes) is not valid JSON, as if cut short", errMalformedAnswer, resp.StatusCode, len(body))
}

// noAnswerError is the transport's error of an attempt that got no answer.
type noAnswerError struct{ err error }

func (e *noAnswerError) Error() string { return e.err.Error() }
func (e *noAnswerError) Unwrap() error { return e.err }

// noAnswerCause is why a request got no answer, as far as the retries and
// the hints of a *ConnectionError care.
type noAnswerCause int

const (
	causeOther       noAnswerCause = iota // a reset, a closed connection, a malformed answer...
	causeTimeout                          // no answer within sink.cloudsearch.timeout
	causeNoSuchHost                       // the host name does not resolve
	causeRefused                          // nothing accepts connections at the address
	causeCertificate                      // the TLS certificate does not verify
	causePlainHTTP                        // an https:// endpoint answered in plain HTTP
)

// causeOf classifies a transport error.
func causeOf(err error) noAnswerCause {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return causeNoSuchHost
	case refused(err):
		return causeRefused
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return causeCertificate
	case errors.Is(err, http.ErrSchemeMismatch):
		return causePlainHTTP
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return causeTimeout
	}
	return causeOther
}

// noAnswerAttempts is how many attempts a request may take in all when
// its last one got no answer because of err: 1 (no retry) for a host name
// that does not resolve, a certificate that does not verify and a
// plain-HTTP answer to an https:// endpoint, at most
// refusedRetries+1 for a refused connection, and maxRetries+1 otherwise.
func (s *Store) noAnswerAttempts(err error) int {
	all := s.cfg.retries() + 1
	switch causeOf(err) {
	case causeNoSuchHost, causeCertificate, causePlainHTTP:
		return 1
	case causeRefused:
		return min(all, refusedRetries+1)
	}
	return all
}

// retryLeft returns ctx with azcore's retries of answers (429, 503...)
// limited to what is left of the request's budget after used attempts.
func (s *Store) retryLeft(ctx context.Context, used int) context.Context {
	if used == 0 {
		return ctx
	}
	o := s.retry
	o.MaxRetries = azcoreRetries(s.cfg.retries() - used)
	return policy.WithRetryOptions(ctx, o)
}

// warnNoAnswer logs, as a warning, the retry of a request that got no
// answer: the operation, the endpoint, the cause, the wait and the attempt
// coming, such as "cloudsearch: list indexes: no answer from
// http://127.0.0.1:8700: dial tcp 127.0.0.1:8700: connect: connection
// refused; retrying in 1.2s (attempt 2 of 3)". The credentials the
// request sent are redacted from it.
func (s *Store) warnNoAnswer(ctx context.Context, c call, sent *sentCredentials, err error, wait time.Duration, attempt, of int) {
	if !s.log.Enabled(ctx, slog.LevelWarn) {
		return
	}
	why := ": " + transportText(err)
	if causeOf(err) == causeTimeout {
		why = " within " + s.cfg.Timeout.String() + " (sink.cloudsearch.timeout)"
	}
	msg := fmt.Sprintf("cloudsearch: %s: no answer from %s%s; retrying in %s (attempt %d of %d)",
		c.op, s.cfg.Endpoint, why, roundWait(wait), attempt, of)
	s.log.LogAttrs(ctx, slog.LevelWarn, sent.redact(msg),
		slog.String("endpoint", s.cfg.Endpoint), slog.Int("attempt", attempt), slog.Int("attempts", of), slog.Duration("wait", roundWait(wait)))
}

// transportText is the text of a transport error without the method and
// URL that net/http puts before it (the endpoint is named apart).
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// roundWait rounds a wait for a message: to the millisecond below a
// second, to a tenth of a second above.
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// noAnswerNote says, for a *ConnectionError, what the cause of err means
// and whether the request was retried; "" when there is nothing to add to
// the general remedy.
func noAnswerNote(err error, endpointFrom string) string {
	switch causeOf(err) {
	case causeNoSuchHost:
		return "the endpoint's host name does not resolve (DNS), so the request was not retried: check the service name in " + endpointFrom +
			" (https://NAME.search.windows.net, NAME as on the service's Overview page), or that this machine resolves a private endpoint's name"
	case causeCertificate:
		return "the endpoint's TLS certificate does not verify, so the request was not retried: check the host name in " + endpointFrom +
			"; behind a TLS-inspecting proxy, add its CA certificate to this machine's trust store (or SSL_CERT_FILE)"
	case causePlainHTTP:
		return "the server at that address answers in plain HTTP, not HTTPS, so the request was not retried: Cloud AI Search serves HTTPS only; " +
			"for a local server such as `sluice devserver search`, write the endpoint in " + endpointFrom + " with http:// (allowed on a loopback address only)"
	case causeRefused:
		return "nothing accepts connections at that address (a refused connection is retried at most " + strconv.Itoa(refusedRetries) +
			" times): check the host and port in " + endpointFrom + ", or start the server"
	}
	return ""
}
