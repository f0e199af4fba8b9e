package cloudsearch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestUnavailableErrors checks which failures mean that no write can
// succeed (sink.ErrUnavailable), so that a pipeline stops instead of
// failing document after document.
func TestUnavailableErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"401", &ServiceError{StatusCode: http.StatusUnauthorized}, true},
		{"403", &ServiceError{StatusCode: http.StatusForbidden}, true},
		{"index missing", &ServiceError{StatusCode: http.StatusNotFound, Index: "docs"}, true},
		{"404 of something else", &ServiceError{StatusCode: http.StatusNotFound}, false},
		{"throttled", &ServiceError{StatusCode: http.StatusTooManyRequests}, false},
		{"server error", &ServiceError{StatusCode: http.StatusInternalServerError}, false},
		{"no answer", &ConnectionError{Err: errors.New("connection refused")}, true},
		{"document rejected", &DocumentError{StatusCode: http.StatusBadRequest}, false},
	}
	for _, tt := range tests {
		if got := errors.Is(tt.err, sink.ErrUnavailable); got != tt.want {
			t.Errorf("%s: errors.Is(err, sink.ErrUnavailable) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRefusedCredentialsNameTheirSource checks that a 403 says where the
// refused key came from: the setting or the variable.
func TestRefusedCredentialsNameTheirSource(t *testing.T) {
	tests := []struct {
		name string
		key  string            // sink.cloudsearch.key
		env  map[string]string // the environment
		want string
	}{
		{"key in the file", "wrong-key", nil, "check sink.cloudsearch.key"},
		{"key in the default variable", "", map[string]string{EnvKey: "wrong-key"}, "check " + EnvKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := searchtest.Start(t, searchtest.Options{Key: testKey})
			cfg := testConfig(url)
			cfg.IndexManagement, cfg.Key = NoValidation, tt.key
			s, err := New(context.Background(), cfg, testHTTP(t), WithGetenv(envOf(tt.env)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Add(context.Background(), makeNodes("a.md", 1))
			if !errors.Is(err, ErrAuth) || !errors.Is(err, sink.ErrUnavailable) {
				t.Fatalf("Add = %v, want ErrAuth and sink.ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "wrong-key") {
				t.Errorf("error %q should say %q and never show the key", err, tt.want)
			}
		})
	}
}

// TestValidateAcceptsUnsortableKey checks that an index whose key cannot
// be sorted, as LlamaIndex's Python store creates it, passes validation:
// documents are then read with skip instead of in key order.
func TestValidateAcceptsUnsortableKey(t *testing.T) {
	cfg := testConfig("https://example.search.windows.net").normalize()
	def := cfg.Definition()
	for i := range def.Fields {
		if def.Fields[i].Key {
			def.Fields[i].Sortable = ptr(false)
		}
	}
	if err := cfg.checkDefinition(def); err != nil {
		t.Fatalf("checkDefinition of a key with sortable false = %v, want it accepted", err)
	}
	if keyFieldSortable(def, cfg.IDFieldKey) {
		t.Error("keyFieldSortable = true for a key with sortable false")
	}
	if !keyFieldSortable(cfg.Definition(), cfg.IDFieldKey) {
		t.Error("keyFieldSortable = false for Sluice's own definition")
	}
}

// TestServiceErrorJoinsItsAdvice: the service's message and Sluice's advice
// read as one sentence, without ".;" between them; a message without advice
// keeps its full stop.
func TestServiceErrorJoinsItsAdvice(t *testing.T) {
	withAdvice := (&ServiceError{Op: "upload", StatusCode: http.StatusForbidden, Message: "Authorization failed."}).Error()
	if !strings.Contains(withAdvice, ": Authorization failed; the service refused the credentials") {
		t.Errorf("403: %q", withAdvice)
	}
	plain := (&ServiceError{Op: "upload", StatusCode: http.StatusBadRequest, Message: "The request is invalid."}).Error()
	if !strings.HasSuffix(plain, ": The request is invalid.") {
		t.Errorf("400: %q", plain)
	}
}
