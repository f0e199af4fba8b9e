package searchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

var keyRE = regexp.MustCompile(`^[A-Za-z0-9_\-=]+$`)

// MaxKeyLength is the longest document key the service accepts.
const MaxKeyLength = 1024

// checkKey applies the service's document key rules.
func checkKey(k string) string {
	switch {
	case k == "":
		return "Invalid document key: the key is empty."
	case len(k) > MaxKeyLength:
		return fmt.Sprintf("Invalid document key: the key is %d characters long; keys are at most %d characters.", len(k), MaxKeyLength)
	case !keyRE.MatchString(k) || strings.HasPrefix(k, "_"):
		return fmt.Sprintf("Invalid document key: '%s'. Keys can only contain letters, digits, underscore (_), dash (-), or equal sign (=), and cannot start with an underscore.", k)
	}
	return ""
}

type indexingResult struct {
	Key          string  `json:"key"`
	Status       bool    `json:"status"`
	ErrorMessage *string `json:"errorMessage"`
	StatusCode   int     `json:"statusCode"`
}

type action struct {
	verb   string
	key    string
	doc    map[string]any // converted field values, without @search.action
	reject string         // why the service refuses this document alone (answered 400 in the 207), or ""
}

// MaxTermBytes is the longest term, in UTF-8 bytes, the service indexes. A
// string in a filterable, sortable or facetable field is indexed whole, as
// one term, so a longer value (or collection element) is refused per
// document; searchable-only fields are split into words by their analyzer.
const MaxTermBytes = 32766

// termTooLarge returns the service's message for the first string value of
// doc that is indexed as one term and is longer than MaxTermBytes, or "".
func (ix *index) termTooLarge(doc map[string]any) string {
	for _, f := range ix.fields { // in definition order, so the message is deterministic
		v, ok := doc[f.Name]
		if !ok || !f.isStringField() || !(f.filterable() || f.is(f.Sortable) || f.is(f.Facetable)) {
			continue
		}
		values := []any{v}
		if arr, ok := v.([]any); ok {
			values = arr
		}
		for _, e := range values {
			if s, ok := e.(string); ok && len(s) > MaxTermBytes {
				return fmt.Sprintf("Field '%s' contains a term that is too large to process. The max length for UTF-8 encoded terms is %d bytes. "+
					"The most likely cause of this error is that filtering, sorting, and/or faceting are enabled on this field, which causes the entire field value to be indexed as a single term. "+
					"Please avoid the use of filtering, sorting, and/or faceting on large fields.", f.Name, MaxTermBytes)
			}
		}
	}
	return ""
}

func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func (s *Server) indexDocuments(w http.ResponseWriter, name string, body []byte) *apiError {
	if err := s.validateBody("IndexBatch", body); err != nil {
		return err
	}
	var batch struct {
		Value []map[string]any `json:"value"`
	}
	if err := decodeNumbers(body, &batch); err != nil {
		return badRequest("The request is invalid. Details: the body is not a valid IndexBatch: %v", err)
	}
	switch n := len(batch.Value); {
	case n == 0:
		return badRequest("The request is invalid. Details: actions : No indexing actions found in the request. Send at least one action in value.")
	case n > MaxBatchActions:
		return badRequest("The request is invalid. Details: actions : The batch has %d actions; a batch can contain at most %d. Split it into smaller batches.", n, MaxBatchActions)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return indexNotFound(name)
	}
	actions := make([]action, len(batch.Value))
	for i, raw := range batch.Value {
		a, err := ix.parseAction(i, raw)
		if err != nil {
			return err
		}
		actions[i] = a
	}
	results := make([]indexingResult, len(actions))
	allOK := true
	for i, a := range actions {
		results[i] = s.apply(ix, a)
		allOK = allOK && results[i].Status
	}
	status := http.StatusOK
	if !allOK {
		status = http.StatusMultiStatus
	}
	writeJSON(w, status, map[string]any{"value": results})
	return nil
}

func failed(key string, status int, msg string) indexingResult {
	return indexingResult{Key: key, StatusCode: status, ErrorMessage: &msg}
}

// apply runs one action; s.mu is held.
func (s *Server) apply(ix *index, a action) indexingResult {
	if msg := checkKey(a.key); msg != "" {
		return failed(a.key, http.StatusBadRequest, msg)
	}
	if a.reject != "" {
		return failed(a.key, http.StatusBadRequest, a.reject)
	}
	if f, ok := s.keyFaults[a.key]; ok && f.times > 0 {
		f.times--
		s.keyFaults[a.key] = f
		return failed(a.key, f.status, faultMessage(f.status))
	}
	old, exists := ix.docs[a.key]
	switch a.verb {
	case "delete":
		delete(ix.docs, a.key)
		return indexingResult{Key: a.key, Status: true, StatusCode: http.StatusOK}
	case "merge":
		if !exists {
			return failed(a.key, http.StatusNotFound, "Document not found.")
		}
		fallthrough
	case "mergeOrUpload":
		if exists {
			merged := cloneDoc(old)
			for k, v := range a.doc {
				merged[k] = v
			}
			ix.docs[a.key] = merged
			return indexingResult{Key: a.key, Status: true, StatusCode: http.StatusOK}
		}
	}
	ix.docs[a.key] = a.doc
	if exists {
		return indexingResult{Key: a.key, Status: true, StatusCode: http.StatusOK}
	}
	return indexingResult{Key: a.key, Status: true, StatusCode: http.StatusCreated}
}

func faultMessage(status int) string {
	switch status {
	case http.StatusConflict:
		return "Document update conflict (injected): another write to this document was in progress. Retry the document."
	case http.StatusUnprocessableEntity:
		return "The index is temporarily unavailable for this document (injected). Retry the document."
	case http.StatusServiceUnavailable:
		return "The service is temporarily unavailable for this document (injected). Retry the document."
	}
	return fmt.Sprintf("Injected failure with status %d.", status)
}

// parseAction checks one action against the index schema. Problems that the
// service rejects for the whole request (unknown fields, wrong types,
// vector dimensions) are returned as errors; key rule violations and terms
// longer than MaxTermBytes are left to apply, which reports them per
// document.
func (ix *index) parseAction(i int, raw map[string]any) (action, *apiError) {
	a := action{verb: "upload", doc: map[string]any{}}
	if v, ok := raw["@search.action"]; ok {
		s, _ := v.(string)
		switch s {
		case "upload", "merge", "mergeOrUpload", "delete":
			a.verb = s
		default:
			return a, badRequest("The request is invalid. Details: value[%d]: '@search.action' is %v; use upload, merge, mergeOrUpload or delete.", i, v)
		}
	}
	kv, ok := raw[ix.key.Name]
	if !ok || kv == nil {
		return a, badRequest("The request is invalid. Details: value[%d]: the document has no value for the key field '%s'.", i, ix.key.Name)
	}
	if a.key, ok = kv.(string); !ok {
		return a, badRequest("The request is invalid. Details: value[%d]: the key field '%s' must be a string.", i, ix.key.Name)
	}
	for name, v := range raw {
		if name == "@search.action" {
			continue
		}
		f, ok := ix.byName[name]
		if !ok {
			return a, badRequest("The request is invalid. Details: value[%d]: The property '%s' does not exist on type 'search.documentFields' of index '%s'. Make sure to only use property names that are defined by the index.", i, name, ix.name)
		}
		if a.verb == "delete" {
			continue
		}
		cv, err := convertValue(f, v)
		if err != nil {
			return a, badRequest("The request is invalid. Details: value[%d], field '%s' (%s): %v", i, name, f.Type, err)
		}
		a.doc[name] = cv
	}
	a.reject = ix.termTooLarge(a.doc)
	return a, nil
}

// convertValue checks v against the field type and returns the value to store.
func convertValue(f *field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if f.isVector() {
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("expected an array of numbers")
		}
		if len(arr) != *f.Dimensions {
			return nil, fmt.Errorf("the vector field '%s' dimensionality must match the field definition's 'dimensions' property. Expected: '%d'. Actual: '%d'", f.Name, *f.Dimensions, len(arr))
		}
		vec := make([]float32, len(arr))
		for j, e := range arr {
			n, ok := e.(json.Number)
			x, err := n.Float64()
			if !ok || err != nil || math.IsInf(x, 0) {
				return nil, fmt.Errorf("element %d is not a number", j)
			}
			vec[j] = float32(x)
		}
		return vec, nil
	}
	if f.isCollection() {
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("expected an array for a collection field")
		}
		for j, e := range arr {
			if err := checkScalar(f.elemType(), e); err != nil {
				return nil, fmt.Errorf("element %d: %w", j, err)
			}
		}
		return arr, nil
	}
	return v, checkScalar(f.Type, v)
}

func checkScalar(typ string, v any) error {
	if v == nil {
		return nil
	}
	switch typ {
	case "Edm.String":
		if _, ok := v.(string); ok {
			return nil
		}
	case "Edm.Boolean":
		if _, ok := v.(bool); ok {
			return nil
		}
	case "Edm.Int32", "Edm.Int64", "Edm.Int16", "Edm.SByte", "Edm.Byte":
		if n, ok := v.(json.Number); ok {
			x, err := n.Int64()
			if err == nil && intFits(typ, x) {
				return nil
			}
			return fmt.Errorf("%s is not a valid %s", n, typ)
		}
	case "Edm.Double", "Edm.Single", "Edm.Half":
		if _, ok := v.(json.Number); ok {
			return nil
		}
		if s, ok := v.(string); ok && (s == "NaN" || s == "INF" || s == "-INF") {
			return nil
		}
	case "Edm.DateTimeOffset":
		if s, ok := v.(string); ok {
			if _, err := time.Parse(time.RFC3339, s); err == nil {
				return nil
			}
		}
	case "Edm.GeographyPoint":
		if _, ok := v.(map[string]any); ok {
			return nil
		}
	}
	return fmt.Errorf("the value %s is not a valid %s", short(v), typ)
}

func intFits(typ string, x int64) bool {
	switch typ {
	case "Edm.Int32":
		return x >= math.MinInt32 && x <= math.MaxInt32
	case "Edm.Int16":
		return x >= math.MinInt16 && x <= math.MaxInt16
	case "Edm.SByte":
		return x >= math.MinInt8 && x <= math.MaxInt8
	case "Edm.Byte":
		return x >= 0 && x <= math.MaxUint8
	}
	return true
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// project returns the retrievable fields of d, limited to sel when given;
// fields the document does not have are null.
func (ix *index) project(d map[string]any, sel []string) map[string]any {
	out := map[string]any{}
	for _, f := range ix.fields {
		if !f.retrievable() || (sel != nil && !slices.Contains(sel, f.Name)) {
			continue
		}
		out[f.Name] = d[f.Name] // absent fields are null, as the service answers
	}
	return out
}

// parseSelect splits a $select list and checks its fields are retrievable;
// "" and "*" mean all retrievable fields (nil).
func (ix *index) parseSelect(sel string) ([]string, *apiError) {
	sel = strings.TrimSpace(sel)
	if sel == "" || sel == "*" {
		return nil, nil
	}
	var out []string
	for _, n := range strings.Split(sel, ",") {
		n = strings.TrimSpace(n)
		f, ok := ix.byName[n]
		if !ok {
			return nil, badRequest("Invalid expression: Could not find a property named '%s' on type 'search.document'.\r\nParameter name: $select", n)
		}
		if !f.retrievable() {
			return nil, badRequest("Invalid expression: The field '%s' is not retrievable and cannot be selected.\r\nParameter name: $select", n)
		}
		out = append(out, n)
	}
	return out, nil
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request, name, key string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return indexNotFound(name)
	}
	sel, err := ix.parseSelect(r.URL.Query().Get("$select"))
	if err != nil {
		return err
	}
	d, ok := ix.docs[key]
	if !ok {
		return &apiError{status: http.StatusNotFound, code: "DocumentNotFound",
			message: fmt.Sprintf("No document with the key '%s' was found in index '%s'.", key, name)}
	}
	writeJSON(w, http.StatusOK, ix.project(d, sel))
	return nil
}
