package cloudsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/sourcegraph/conc/pool"

	"github.com/sluice-dev/sluice/sink"
)

// Search actions of docs/index.
const (
	actionMergeOrUpload = "mergeOrUpload"
	actionMerge         = "merge"
	actionDelete        = "delete"
)

// keyRE is what the service accepts as a document key.
var keyRE = regexp.MustCompile(`^[A-Za-z0-9\-=][A-Za-z0-9_\-=]*$`)

func validKey(k string) bool { return len(k) <= 1024 && keyRE.MatchString(k) }

// encodedDoc is one action of a docs/index request, encoded once.
type encodedDoc struct {
	key  string
	json []byte
}

// writeResult collects the outcome of every document of a write.
type writeResult struct {
	mu       sync.Mutex
	acked    map[string]bool
	failed   map[string]error
	fatal    error // the first request-level error, kept for errors.Is
	deleting bool  // the documents are to be deleted (DeleteNodes)
}

func newWriteResult() *writeResult {
	return &writeResult{acked: map[string]bool{}, failed: map[string]error{}}
}

// op names the requests of the write in errors.
func (r *writeResult) op() string {
	if r.deleting {
		return "delete documents"
	}
	return "upload documents"
}

func (r *writeResult) ack(key string) {
	r.mu.Lock()
	r.acked[key] = true
	r.mu.Unlock()
}

func (r *writeResult) fail(key string, err error) {
	r.mu.Lock()
	r.failed[key] = err
	r.mu.Unlock()
}

func (r *writeResult) failAll(docs []encodedDoc, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal == nil {
		r.fatal = err
	}
	for _, d := range docs {
		r.failed[d.key] = err
	}
}

// err returns nil when nothing failed, else a *sink.WriteError joined with
// the first request-level error so that errors.Is(err, ErrAuth) and the
// like still work.
func (r *writeResult) err() error {
	if len(r.failed) == 0 {
		return nil
	}
	werr := &sink.WriteError{Failed: r.failed, Deleting: r.deleting}
	if r.fatal != nil {
		return &batchError{write: werr, fatal: r.fatal}
	}
	return werr
}

// batchError is a write some of whose documents failed with a request
// that failed whole (fatal: the service out of reach, a refused
// credential): a *sink.WriteError listing them that also unwraps to the
// request's error, so that errors.Is finds its sentinels
// (sink.ErrUnavailable, a context's end).
type batchError struct {
	write *sink.WriteError
	fatal error
}

// Error returns the message of the WriteError, which names the request's
// error as the reason of the documents it failed; when it names another
// document's reason, the request's error follows.
func (e *batchError) Error() string {
	msg := e.write.Error()
	for _, err := range e.write.Failed {
		if !errors.Is(err, e.fatal) {
			return msg + "; " + e.fatal.Error()
		}
	}
	return msg
}

// Unwrap returns the WriteError and the request's error.
func (e *batchError) Unwrap() []error { return []error{e.write, e.fatal} }

// Add uploads nodes with mergeOrUpload in batches of at most
// uploadBatchSize actions and 16 MiB, uploadConcurrency at a time, and
// returns the ids of the nodes the service acknowledged, in input order.
// A node listed twice is written once (its last occurrence). Embeddings of
// the wrong length fail the whole call before anything is sent. Every other
// node is either acknowledged or reported in the returned *sink.WriteError.
func (s *Store) Add(ctx context.Context, nodes []sink.Node) ([]string, error) {
	if err := sink.CheckDimensions(nodes, s.cfg.EmbeddingDimensionality); err != nil {
		return nil, err
	}
	return s.upload(ctx, nodes, actionMergeOrUpload)
}

var _ sink.MetadataUpdater = (*Store)(nil)

// UpdateMetadata rewrites the metadata (and the offsets kept in it) of
// stored nodes with merge actions that leave their vectors alone, so that
// incremental runs need not embed unchanged chunks again. A node that is not
// stored is reported in the returned *sink.WriteError.
func (s *Store) UpdateMetadata(ctx context.Context, nodes []sink.Node) error {
	_, err := s.upload(ctx, nodes, actionMerge)
	return err
}

// upload sends nodes with the given search action; see Add.
func (s *Store) upload(ctx context.Context, nodes []sink.Node, action string) ([]string, error) {
	res := newWriteResult()
	order := make([]string, 0, len(nodes))
	last := make(map[string]int, len(nodes))
	for i := range nodes {
		if _, dup := last[nodes[i].ID]; !dup {
			order = append(order, nodes[i].ID)
		}
		last[nodes[i].ID] = i
	}
	docs := make([]encodedDoc, 0, len(order))
	for _, id := range order {
		n := &nodes[last[id]]
		if !validKey(id) {
			res.fail(id, &DocumentError{Key: id, StatusCode: http.StatusBadRequest, Message: "invalid node id: use 1 to 1024 letters, digits, '-', '_' or '=', not starting with '_' (sink.NodeID makes valid ids)"})
			continue
		}
		d, err := s.cfg.toDocument(n, action)
		if err == nil {
			var b []byte
			b, err = json.Marshal(d)
			docs = append(docs, encodedDoc{key: id, json: b})
		}
		if err != nil {
			res.fail(id, fmt.Errorf("cloudsearch: node %s: %w", id, err))
		}
	}
	s.write(ctx, docs, res)
	ids := make([]string, 0, len(order))
	for _, id := range order {
		if res.acked[id] {
			ids = append(ids, id)
		}
	}
	return ids, res.err()
}

// write sends docs in batches, several at a time, and records the outcome
// of every document in res.
func (s *Store) write(ctx context.Context, docs []encodedDoc, res *writeResult) {
	p := pool.New().WithMaxGoroutines(s.cfg.UploadConcurrency)
	for _, batch := range packBatches(docs, s.cfg.UploadBatchSize, s.maxBatchBytes()) {
		p.Go(func() { s.sendWithRetries(ctx, batch, res) })
	}
	p.Wait()
}

func (s *Store) maxBatchBytes() int { return MaxBatchBytes }

// batchOverhead is the length of {"value":[]}.
const batchOverhead = len(`{"value":[]}`)

// packBatches splits docs into batches of at most maxDocs documents whose
// encoded request body is at most maxBytes. A document larger than maxBytes
// alone gets a batch of its own (the service then answers 413 and the
// document is reported).
func packBatches(docs []encodedDoc, maxDocs, maxBytes int) [][]encodedDoc {
	var batches [][]encodedDoc
	start, size := 0, batchOverhead
	for i, d := range docs {
		add := len(d.json)
		if i > start {
			add++ // comma
		}
		if i > start && (i-start >= maxDocs || size+add > maxBytes) {
			batches = append(batches, docs[start:i:i])
			start, size, add = i, batchOverhead, len(d.json)
		}
		size += add
	}
	if start < len(docs) {
		batches = append(batches, docs[start:])
	}
	return batches
}

// encodeBatch returns the docs/index request body of docs.
func encodeBatch(docs []encodedDoc) []byte {
	n := batchOverhead
	for _, d := range docs {
		n += len(d.json) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"value":[`...)
	for i, d := range docs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d.json...)
	}
	return append(b, "]}"...)
}

// indexingResult is one document's status in a docs/index answer.
type indexingResult struct {
	Key          string `json:"key"`
	Status       bool   `json:"status"`
	ErrorMessage string `json:"errorMessage"`
	StatusCode   int    `json:"statusCode"`
}

// errKeysPending tells the backoff loop that retryable documents remain.
var errKeysPending = errors.New("cloudsearch: documents with a retryable status remain")

// sendWithRetries sends one batch. Throttled and failed requests (408, 429,
// 500, 502, 503, 504) are retried by the retry policy of the store's azcore
// HTTP pipeline (runtime.Pipeline, not Sluice's pipeline package),
// honouring Retry-After, and requests that got no answer by Store.do (see
// noAnswerPolicy); here, documents whose own status is retryable (409, 422,
// 503) are re-sent alone with exponential backoff, and a 413 splits the
// batch in two.
func (s *Store) sendWithRetries(ctx context.Context, docs []encodedDoc, res *writeResult) {
	pending := docs
	attempts := 0
	lastErr := map[string]*DocumentError{}
	op := func() error {
		attempts++
		results, err := s.sendBatch(ctx, pending, res.op())
		if statusOf(err) == http.StatusRequestEntityTooLarge {
			if len(pending) == 1 {
				res.fail(pending[0].key, &DocumentError{Key: pending[0].key, StatusCode: http.StatusRequestEntityTooLarge, Attempts: attempts,
					Message: fmt.Sprintf("the document alone (%d bytes encoded) is larger than the service accepts in a request; shorten the chunk (splitter.chunkSize) or its metadata", len(pending[0].json))})
			} else {
				half := len(pending) / 2
				s.sendWithRetries(ctx, pending[:half:half], res)
				s.sendWithRetries(ctx, pending[half:], res)
			}
			pending = nil
			return nil
		}
		if err != nil {
			res.failAll(pending, err)
			pending = nil
			return backoff.Permanent(err)
		}
		pending = s.sortResults(pending, results, attempts, lastErr, res)
		if len(pending) > 0 {
			return errKeysPending
		}
		return nil
	}
	b := backoff.WithContext(backoff.WithMaxRetries(s.newBackOff(), uint64(s.cfg.retries())), ctx)
	if err := backoff.Retry(op, b); err != nil && len(pending) > 0 {
		for _, d := range pending {
			var e error = lastErr[d.key]
			if ctx.Err() != nil {
				e = fmt.Errorf("cloudsearch: document %s not acknowledged: %w", d.key, ctx.Err())
			}
			res.fail(d.key, e)
		}
	}
}

// sortResults records acknowledged and permanently rejected documents and
// returns those to send again.
func (s *Store) sortResults(sent []encodedDoc, results []indexingResult, attempts int, lastErr map[string]*DocumentError, res *writeResult) []encodedDoc {
	byKey := make(map[string]indexingResult, len(results))
	for _, r := range results {
		byKey[r.Key] = r
	}
	var retry []encodedDoc
	for _, d := range sent {
		r, ok := byKey[d.key]
		switch {
		case ok && r.Status:
			res.ack(d.key)
		case !ok:
			lastErr[d.key] = &DocumentError{Key: d.key, StatusCode: http.StatusServiceUnavailable, Message: "the service's answer did not mention the document", Attempts: attempts}
			retry = append(retry, d)
		case retryableDocStatus(r.StatusCode):
			lastErr[d.key] = &DocumentError{Key: d.key, StatusCode: r.StatusCode, Message: oneLine(r.ErrorMessage), Attempts: attempts}
			retry = append(retry, d)
		default:
			res.fail(d.key, &DocumentError{Key: d.key, StatusCode: r.StatusCode, Message: oneLine(r.ErrorMessage), Attempts: attempts})
		}
	}
	return retry
}

// sendBatch posts one docs/index request and returns the per-document
// results of a 200 or 207 answer, with the credentials the request sent
// redacted from their messages. op names the request in errors.
func (s *Store) sendBatch(ctx context.Context, docs []encodedDoc, op string) ([]indexingResult, error) {
	var out struct {
		Value []indexingResult `json:"value"`
	}
	sent := &sentCredentials{}
	err := s.doJSON(ctx, call{op: op, method: http.MethodPost, path: s.indexPath("/docs/index"), body: encodeBatch(docs), index: true, upload: true, sent: sent}, &out)
	for i := range out.Value {
		out.Value[i].ErrorMessage = sent.redact(out.Value[i].ErrorMessage)
	}
	return out.Value, err
}

// newBackOff is the per-document retry schedule: exponential from the retry
// delay, with jitter, at most 30s apart.
func (s *Store) newBackOff() backoff.BackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(s.retryDelay),
		backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(0),
	)
}

// DeleteNodes removes the documents with the given keys, in batches; unknown
// keys are ignored by the service. Keys that could not be deleted are
// reported in a *sink.WriteError.
func (s *Store) DeleteNodes(ctx context.Context, ids []string) error {
	seen := make(map[string]bool, len(ids))
	docs := make([]encodedDoc, 0, len(ids))
	res := newWriteResult()
	res.deleting = true
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if !validKey(id) {
			continue // no document can have this key
		}
		b, err := json.Marshal(document{"@search.action": actionDelete, s.cfg.IDFieldKey: id})
		if err != nil {
			res.fail(id, err)
			continue
		}
		docs = append(docs, encodedDoc{key: id, json: b})
	}
	s.write(ctx, docs, res)
	return res.err()
}
