package cloudsearch

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/sink"
)

// Sentinel errors. The typed errors below wrap them, so callers classify
// failures with errors.Is.
var (
	// ErrConfig marks an invalid or incomplete setting.
	ErrConfig = errors.New("cloudsearch: invalid configuration")
	// ErrIndexNotFound marks a request to an index that does not exist.
	ErrIndexNotFound = errors.New("cloudsearch: index not found")
	// ErrAuth marks a request the service refused to authenticate or
	// authorize (*ServiceError 401 or 403), or one that could not be sent
	// because its Microsoft Entra credential got no token (*CredentialError).
	ErrAuth = errors.New("cloudsearch: authentication failed")
	// ErrIndexMismatch marks an existing index whose definition does not
	// match the configuration (key field, vector field, dimensions, vector
	// algorithm, compression, analyzer, fields or field types).
	ErrIndexMismatch = errors.New("cloudsearch: index does not match the configuration")
	// ErrConnection marks a request that got no answer: the endpoint is
	// unreachable or the request timed out.
	ErrConnection = errors.New("cloudsearch: connection failed")
	// ErrThrottled marks a request still throttled (429 or 503) after every retry.
	ErrThrottled = errors.New("cloudsearch: service throttled the request")
	// ErrService marks any other error answer of the service.
	ErrService = errors.New("cloudsearch: service error")
	// ErrDocument marks a document the service rejected in an upload.
	ErrDocument = errors.New("cloudsearch: document rejected")
	// ErrScanLimit marks a read (GetNodes, Delete) that cannot page through
	// every matching document because the index's key field is not
	// sortable (see ScanLimitError).
	ErrScanLimit = errors.New("cloudsearch: cannot page through the documents without a sortable key field")
)

// ConfigError reports a setting that is wrong or missing.
type ConfigError struct {
	Setting string // the full key, e.g. "sink.cloudsearch.indexName"
	Reason  string // what is wrong
	Hint    string // how to fix it
	// Err is the underlying error, if any, such as azidentity's error when
	// the credential that sink.cloudsearch.credential names cannot be
	// built. Its message is part of the ConfigError's, so it must not carry
	// a secret.
	Err error
}

// Error names the setting, says what is wrong (with the underlying
// error's message, if any) and how to fix it.
func (e *ConfigError) Error() string {
	s := "cloudsearch: " + e.Setting + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns ErrConfig and, if set, the underlying error, so that
// callers can classify with errors.Is(err, ErrConfig) and still reach the
// cause with errors.As (for example an *azidentity.AuthenticationFailedError).
func (e *ConfigError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.Err}
}

func configErr(key, reason, hint string) *ConfigError {
	return &ConfigError{Setting: settingPrefix + key, Reason: reason, Hint: hint}
}

// configErrCause is configErr with the underlying error err.
func configErrCause(key, reason string, err error, hint string) *ConfigError {
	return &ConfigError{Setting: settingPrefix + key, Reason: reason, Hint: hint, Err: err}
}

const settingPrefix = "sink.cloudsearch."

// oneLine returns a message of the service on one line: its messages break
// lines with "\r\n" ("...\r\nParameter name: $filter"), and a carriage
// return in an error printed on a terminal sends the rest of the line over
// its start.
func oneLine(msg string) string {
	if !strings.ContainsAny(msg, "\r\n") {
		return msg
	}
	return strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
}

// ServiceError is an error answer of the service. It never contains the
// request headers, and the credentials the request sent are redacted from
// the service's Code and Message, so no key or token can leak through it.
type ServiceError struct {
	Op         string // what the store was doing, e.g. "create index"
	Index      string // the index name, if the request was about one
	StatusCode int    // the HTTP status
	Code       string // the service's error code, if any
	Message    string // the service's error message on one line, if any
	Endpoint   string // the service endpoint (no credentials)
	// RetryAfter is the wait the service asked for with its answer
	// (Retry-After or retry-after-ms), 0 if none. Waits up to MaxRetryWait
	// are honoured by the retries; a longer one ends them at once.
	RetryAfter time.Duration

	// upload is set when the request was a docs/index upload, whose
	// throttling the upload settings can ease; a throttled read (a query,
	// a lookup, a count) is eased by replicas or by waiting instead.
	upload bool

	credentials string // where the refused credentials came from, for the 401/403 hint
	// For the remedy of a missing index (404): createsIndex when the
	// store's indexManagement is CreateIfNotExists, and indexOpened when New
	// applied it, so that the index was there, or was created, when the
	// store was opened (see WithoutIndexManagement).
	createsIndex, indexOpened bool
	// unvalidated is set on an index request of a store whose
	// indexManagement is NoValidation, which never compared the index with
	// the settings: a 400 may come from an index made with other ones.
	unvalidated bool
}

// Error gives the operation, the status, the service's message and, for the
// statuses a user can act on, what to do.
func (e *ServiceError) Error() string {
	s := "cloudsearch: " + e.Op + ": " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	advice := e.advice()
	switch {
	case e.Message != "" && advice != "":
		s += ": " + credential.Clause(e.Message)
	case e.Message != "":
		s += ": " + e.Message
	}
	return s + advice
}

// advice says what to do about the error, as "; " and the remedy, or ""
// where the status and message say all there is.
func (e *ServiceError) advice() string {
	switch {
	case e.StatusCode == http.StatusNotFound && e.Index != "" && e.createsIndex && e.indexOpened:
		return fmt.Sprintf("; index %q no longer exists at %s: it was deleted after the store opened it; the next `sluice run` creates it again (sink.cloudsearch.indexManagement is CreateIfNotExists), as `sluice index create` does", e.Index, e.Endpoint)
	case e.StatusCode == http.StatusNotFound && e.Index != "" && e.createsIndex:
		return fmt.Sprintf("; index %q does not exist yet at %s: `sluice index create` or the first `sluice run` creates it (sink.cloudsearch.indexManagement is CreateIfNotExists)", e.Index, e.Endpoint)
	case e.StatusCode == http.StatusNotFound && e.Index != "":
		return fmt.Sprintf("; index %q does not exist at %s: create it with `sluice index create` (%s), or set sink.cloudsearch.indexManagement to CreateIfNotExists", e.Index, e.Endpoint, withConfig)
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		creds := e.credentials
		if creds == "" {
			creds = EnvKey + " (an admin key of this service) or the identity's role assignments"
		}
		return "; the service refused the credentials: check " + creds + ", then verify by listing indexes (`sluice doctor` does)"
	case (e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable) && e.RetryAfter > MaxRetryWait:
		return fmt.Sprintf("; the service is throttling and asked to wait %s (Retry-After), longer than the %s a retry waits at most, so it was not retried: try again later, %s", e.RetryAfter.Round(time.Second), MaxRetryWait, e.throttleRemedy())
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable:
		return "; the service is throttling: raise " + settingPrefix + "maxRetries, " + e.throttleRemedy()
	case e.StatusCode == http.StatusBadRequest && e.Index != "" && e.unvalidated:
		return fmt.Sprintf("; check that index %q matches the settings (its fields, the field keys, filterableMetadataFieldKeys, the dimensions): %sindexManagement is NoValidation, so nothing compared them; `sluice index validate` names any setting that differs", e.Index, settingPrefix)
	case e.StatusCode == http.StatusInternalServerError || e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusGatewayTimeout:
		return "; the service kept failing through the retries of sink.cloudsearch.maxRetries: try again later, raise maxRetries, or check the service's health in the Azure portal"
	}
	return ""
}

// throttleRemedy says what eases the throttling of the request: for an
// upload, smaller or fewer concurrent upload requests; for a read, which
// the upload settings of the store do not shape, replicas or a quieter
// moment (a bulk load writing to the same service competes with it).
func (e *ServiceError) throttleRemedy() string {
	if e.upload {
		return "lower " + settingPrefix + "uploadConcurrency or uploadBatchSize, or add replicas/partitions"
	}
	return "add replicas (they serve reads), or read while no bulk load is writing to the service"
}

// Unwrap returns the sentinel matching the status: ErrIndexNotFound or
// ErrAuth (each with sink.ErrUnavailable: no write can succeed),
// ErrThrottled or ErrService.
func (e *ServiceError) Unwrap() []error {
	switch e.StatusCode {
	case http.StatusNotFound:
		if e.Index != "" {
			return []error{ErrIndexNotFound, sink.ErrUnavailable}
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		return []error{ErrAuth, sink.ErrUnavailable}
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return []error{ErrThrottled}
	}
	return []error{ErrService}
}

// ConnectionError reports a request that got no answer. How often it was
// tried depends on the cause (see noAnswerPolicy): a host name that does
// not resolve and a certificate that does not verify are not retried, a
// refused connection at most twice, anything else (a timeout, a reset) up
// to sink.cloudsearch.maxRetries times.
type ConnectionError struct {
	Op       string // what the store was doing
	Endpoint string // the service endpoint
	Timeout  string // the configured per-request timeout
	// Attempts is how many times the request was sent, retries included
	// (0 when unknown).
	Attempts int
	// EndpointFrom names where the endpoint came from: the setting
	// sink.cloudsearch.endpoint or the variable that held it.
	EndpointFrom string
	Err          error // the transport's error
}

// Error names the endpoint that did not answer, how often it was tried,
// what the cause means, and what to check.
func (e *ConnectionError) Error() string {
	s := "cloudsearch: " + e.Op + ": no answer from " + e.Endpoint
	if e.Attempts > 1 {
		s += " after " + strconv.Itoa(e.Attempts) + " attempts"
	}
	s += ": " + e.Err.Error() + "; "
	from := e.EndpointFrom
	if from == "" {
		from = settingPrefix + "endpoint"
	}
	if note := noAnswerNote(e.Err, from); note != "" {
		s += note + "; "
	}
	return s + "check that the endpoint is right and reachable from this machine (DNS, firewall, private endpoint), " +
		"and raise sink.cloudsearch.timeout (now " + e.Timeout + ") if the service is slow"
}

// Unwrap returns ErrConnection, sink.ErrUnavailable (no write can succeed
// while the endpoint does not answer) and the underlying error.
func (e *ConnectionError) Unwrap() []error { return []error{ErrConnection, sink.ErrUnavailable, e.Err} }

// CredentialError reports a request that was not sent because its
// Microsoft Entra credential (DefaultAzureCredential, ManagedIdentityCredential
// or one given with WithCredential) could not get a token: the credential
// is unavailable where Sluice runs (not signed in, no managed identity) or
// Microsoft Entra ID refused it. It never contains a token.
type CredentialError struct {
	Op          string // what the store was doing, e.g. "list indexes"
	Credential  string // the credential, e.g. "DefaultAzureCredential"
	Endpoint    string // the service endpoint
	Unavailable bool   // the credential could not try (rather than being refused)
	Hint        string // how to make the credential work
	Err         error  // the credential's error
}

// Error names the credential that got no token, the endpoint nothing was
// sent to, and the roles the identity needs.
func (e *CredentialError) Error() string {
	what := "could not get a token"
	if e.Unavailable {
		what = "is unavailable here and got no token"
	}
	s := "cloudsearch: " + e.Op + ": " + e.Credential + " " + what + " for " + searchScope + ", so nothing was sent to " + e.Endpoint + ": " + e.Err.Error() + "; "
	if e.Hint != "" {
		s += e.Hint + "; "
	}
	return s + "then verify by listing indexes (`sluice doctor` does), and give the identity the roles it needs on the search service (" + rolesNeeded + ")"
}

// Unwrap returns ErrAuth and sink.ErrUnavailable (no request can succeed
// without a token), and the credential's error.
func (e *CredentialError) Unwrap() []error { return []error{ErrAuth, sink.ErrUnavailable, e.Err} }

// MismatchError reports an existing index that does not match the
// configuration.
type MismatchError struct {
	Index   string // the index name
	Setting string // the setting that disagrees, e.g. "sink.cloudsearch.embeddingDimensionality"
	Want    string // what the configuration expects
	Got     string // what the index has
	Hint    string // how to fix it
}

// Error names the index, the setting, both values and the remedy.
func (e *MismatchError) Error() string {
	s := fmt.Sprintf("cloudsearch: index %q does not match %s: configured %s, index has %s", e.Index, e.Setting, e.Want, e.Got)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns ErrIndexMismatch, plus sink.ErrDimensionMismatch when the
// dimensions differ.
func (e *MismatchError) Unwrap() []error {
	if e.Setting == settingPrefix+"embeddingDimensionality" {
		return []error{ErrIndexMismatch, sink.ErrDimensionMismatch}
	}
	return []error{ErrIndexMismatch}
}

// ScanLimitError reports a read (GetNodes, Delete) that could not page
// through every document it matches, on an index whose key field is not
// sortable, such as the indexes LlamaIndex's Python store creates. Sluice
// pages by key on indexes whose key is sortable (those it creates), with
// no limit; without a sortable key it pages with skip, which the service
// caps at 100,000, so at most Reach documents can be read, and in an order
// the service does not promise to keep from one request to the next.
type ScanLimitError struct {
	Op       string // what the store was doing, e.g. "get nodes"
	Index    string // the index name
	KeyField string // the index's key field, which is not sortable
	Matches  int    // documents the read matches, as the service counted them; -1 if unknown
	Reach    int    // the most documents paging with skip reaches (skip's maximum plus one page)
	// Passes is the number of times the documents were paged through
	// without one pass seeing all Matches of them (the service ordered them
	// differently from request to request); 0 when Matches is above Reach.
	Passes int
}

// Error says why the documents could not all be read and how to recreate
// the index or narrow the request.
func (e *ScanLimitError) Error() string {
	var why string
	switch {
	case e.Passes > 0:
		why = fmt.Sprintf("%d documents match, but %d passes through them with skip did not find them all (the service returned them in a different order from one page to the next)", e.Matches, e.Passes)
	case e.Matches >= 0:
		why = fmt.Sprintf("%d documents match, more than the %d that paging with skip reaches (the service refuses a skip above %d)", e.Matches, e.Reach, e.Reach-maxPageSize)
	default:
		why = fmt.Sprintf("more documents match than the %d that paging with skip reaches (the service refuses a skip above %d)", e.Reach, e.Reach-maxPageSize)
	}
	narrow := "or narrow the request: filters, ids or a limit for GetNodes, fewer nodes per reference document for Delete"
	if e.Op == listNodesOp {
		// A listing of every node cannot be narrowed.
		narrow = "or delete documents whose files are gone with `sluice delete --doc-id`"
	}
	return fmt.Sprintf("cloudsearch: %s: index %q: %s; the index's key field %q is not sortable, so Sluice cannot read the documents in key order, which has no such limit. "+
		"Recreate the index with Sluice's definition, whose key is sortable (%s), %s",
		e.Op, e.Index, why, e.KeyField, recreateSteps, narrow)
}

// Unwrap returns ErrScanLimit and sink.ErrUnsupported.
func (e *ScanLimitError) Unwrap() []error { return []error{ErrScanLimit, sink.ErrUnsupported} }

// DocumentError reports one document the service did not accept. It is the
// value type of sink.WriteError.Failed for this store.
type DocumentError struct {
	Key        string // the document key (node id)
	StatusCode int    // the per-document status, or the request's status
	Message    string // the service's message on one line, with credentials redacted
	Attempts   int    // how many times the document was sent
}

// Error gives the document's key, the status, the service's message and
// the number of attempts.
func (e *DocumentError) Error() string {
	s := "cloudsearch: document " + e.Key + " rejected with status " + strconv.Itoa(e.StatusCode)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += " (after " + strconv.Itoa(e.Attempts) + " attempts)"
	}
	switch {
	case strings.Contains(e.Message, "term that is too large"):
		s += "; " + termTooLargeHint
	case e.StatusCode == http.StatusNotFound:
		s += "; " + notStoredHint
	}
	return s
}

// notStoredHint says what to do about a node whose metadata could not be
// updated (a merge, see Store.UpdateMetadata) because the index no longer
// holds it: only uploads create documents, and a merge carries no vector.
const notStoredHint = "the index no longer holds this node (it was deleted from the index behind Sluice's back, or the index was emptied or created again), " +
	"so its metadata cannot be updated without its embedding: `sluice run --verify` finds the nodes the index lost and embeds and writes them again " +
	"(`sluice run --full` rewrites every document)"

// termTooLargeHint says what to do about a value the service refuses as
// one term longer than 32,766 UTF-8 bytes.
const termTooLargeHint = "a filterable, sortable or facetable string field is indexed as one term, at most 32,766 bytes: " +
	"keep filterable metadata values (filterableMetadataFieldKeys) shorter; if the field is the chunk or the metadata string, " +
	"the index was created with them sortable or facetable (by an older Sluice, or by hand): delete and recreate it (" + recreateSteps + ") " +
	"to create them with sortable and facetable false, or make chunks shorter (splitter.chunkSize)"

// Unwrap returns ErrDocument.
func (e *DocumentError) Unwrap() error { return ErrDocument }

// Retryable reports whether the status is one the service documents as
// transient for a single document: 409, 422 or 503.
func (e *DocumentError) Retryable() bool { return retryableDocStatus(e.StatusCode) }

func retryableDocStatus(code int) bool {
	return code == http.StatusConflict || code == http.StatusUnprocessableEntity || code == http.StatusServiceUnavailable
}
