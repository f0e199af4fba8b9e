package cloudsearch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestAPIVersionConfigError checks that a wrong API version, in the
// setting or the variable, is a *ConfigError naming both, the source of
// the value and the versions Sluice knows: refused before any request when
// it cannot be a published version, and mapped from the service's 400
// when it is dated after every version Sluice knows and the service does
// not serve it. Versions Sluice knows work, in either spelling of preview.
func TestAPIVersionConfigError(t *testing.T) {
	tests := []struct {
		name     string
		cfg, env string
		sent     int      // requests that reached the service
		words    []string // in the error; none: no error
	}{
		{"unpublished in the setting", "1999-01-01", "", 0, []string{`"1999-01-01" is not an API version that Cloud AI Search publishes`}},
		{"unpublished in the variable", "", "1999-01-01", 0, []string{`CLOUD_SEARCH_API_VERSION holds "1999-01-01"`}},
		{"typo of a published date", "", "2024-07-10", 0, []string{`"2024-07-10", which is not an API version that Cloud AI Search publishes`}},
		{"older than vector search", "2020-06-30", "", 0, []string{"older than vector search"}},
		{"not a date", "", "latest", 0, []string{"is not an API version (YYYY-MM-DD"}},
		{"newer, refused by the service", "", "2099-01-01", 1, []string{`the service refused api-version "2099-01-01" (from CLOUD_SEARCH_API_VERSION)`, "400", searchtest.InvalidAPIVersionMessage}},
		{"newer in the setting, refused", "2099-01-01-preview", "", 1, []string{`the service refused api-version "2099-01-01-preview" (from sink.cloudsearch.apiVersion)`}},
		{"known stable", "2025-09-01", "", 1, nil},
		{"known preview spelled Preview", "", "2024-03-01-Preview", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := searchtest.Start(t, searchtest.Options{Key: testKey})
			cfg := testConfig(url)
			cfg.IndexManagement, cfg.APIVersion = ValidateIndex, tt.cfg
			_, err := New(context.Background(), cfg, testHTTP(t), WithRetryDelay(time.Millisecond),
				WithGetenv(envOf(map[string]string{EnvKey: testKey, EnvAPIVersion: tt.env})))
			if n := len(srv.Requests()); n != tt.sent {
				t.Errorf("%d requests reached the service, want %d", n, tt.sent)
			}
			if tt.words == nil {
				if !errors.Is(err, ErrIndexNotFound) { // the version is fine; the index is missing
					t.Fatalf("New() = %v, want the version accepted (and the missing index reported)", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || ce.Setting != "sink.cloudsearch.apiVersion" {
				t.Fatalf("New() = %v, want a *ConfigError for sink.cloudsearch.apiVersion", err)
			}
			for _, w := range append(tt.words, "sink.cloudsearch.apiVersion", EnvAPIVersion, strings.Join(azspec.APIVersions, ", ")) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestAPIVersionRefusedStopsWrites checks that an API version the service
// refuses, found by an upload (indexManagement NoValidation sends nothing
// before), fails the write as unavailable and as a configuration error, so
// that a pipeline stops at once (and the CLI exits 2), and is not retried;
// and that the store warns that the version is newer than those it knows.
func TestAPIVersionRefusedStopsWrites(t *testing.T) {
	srv, url := searchtest.Start(t, searchtest.Options{Key: testKey})
	cfg := testConfig(url)
	cfg.IndexManagement, cfg.APIVersion = NoValidation, "2099-01-01"
	s, log := loggedStore(t, cfg, testHTTP(t))
	if w := warnLines(log.String()); len(w) != 1 || !strings.Contains(w[0], "api-version 2099-01-01 (from sink.cloudsearch.apiVersion) is newer than the versions this Sluice knows") {
		t.Errorf("warnings %q, want one about the unknown newer version", w)
	}
	_, err := s.Add(context.Background(), makeNodes("a.md", 2))
	var se *ServiceError
	if !errors.Is(err, ErrConfig) || !errors.Is(err, sink.ErrUnavailable) || !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
		t.Fatalf("Add() = %v, want ErrConfig and sink.ErrUnavailable wrapping the service's 400", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests sent, want 1 (a refused version is not retried)", n)
	}
}
