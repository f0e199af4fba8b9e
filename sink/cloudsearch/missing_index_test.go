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

// adviseCreateIfNotExists is the remedy of a missing index when
// indexManagement does not create it, and wrong advice when it does.
const adviseCreateIfNotExists = "set sink.cloudsearch.indexManagement to CreateIfNotExists"

// openUnmanaged starts a test server without indexes and opens a store on
// it with WithoutIndexManagement and the given indexManagement.
func openUnmanaged(t *testing.T, management IndexManagement) (*Store, *searchtest.Server) {
	t.Helper()
	return startStore(t, searchtest.Options{}, func(c *Config) { c.IndexManagement = management }, WithoutIndexManagement())
}

// TestWithoutIndexManagement: New with WithoutIndexManagement sends no
// request and creates no index, whatever indexManagement says, and keeps
// the setting in the store's configuration.
func TestWithoutIndexManagement(t *testing.T) {
	for _, m := range []IndexManagement{CreateIfNotExists, ValidateIndex, NoValidation} {
		t.Run(string(m), func(t *testing.T) {
			s, srv := openUnmanaged(t, m)
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("New sent %d requests, want none", n)
			}
			if got := s.Config().IndexManagement; got != m {
				t.Errorf("Config().IndexManagement = %s, want %s", got, m)
			}
			if err := s.ValidateIndex(context.Background()); !errors.Is(err, ErrIndexNotFound) {
				t.Errorf("ValidateIndex = %v, want ErrIndexNotFound", err)
			}
			if _, ok := srv.Index("docs"); ok {
				t.Error("the index was created")
			}
		})
	}
}

// TestMissingIndexRemedy: the error of a request to a missing index is
// still a 404 *ServiceError wrapping ErrIndexNotFound and
// sink.ErrUnavailable, and its remedy fits indexManagement: with
// CreateIfNotExists it says what creates the index (not yet created, or
// deleted since the store opened it), never to set the setting it
// already has; otherwise it says to create the index or set
// CreateIfNotExists.
func TestMissingIndexRemedy(t *testing.T) {
	ctx := context.Background()
	deletedSinceOpened := func(t *testing.T) *Store {
		s, _ := startStore(t, searchtest.Options{}, nil) // CreateIfNotExists: New creates the index
		if err := s.DeleteIndex(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	unmanaged := func(m IndexManagement) func(t *testing.T) *Store {
		return func(t *testing.T) *Store { s, _ := openUnmanaged(t, m); return s }
	}
	tests := []struct {
		name    string
		open    func(t *testing.T) *Store
		want    []string
		notWant []string
	}{
		{"CreateIfNotExists, not created yet", unmanaged(CreateIfNotExists),
			[]string{`index "docs" does not exist yet at http://`, ": `sluice index create` or the first `sluice run` creates it (sink.cloudsearch.indexManagement is CreateIfNotExists)"},
			[]string{adviseCreateIfNotExists, "no longer"}},
		{"CreateIfNotExists, deleted since opened", deletedSinceOpened,
			[]string{`index "docs" no longer exists at http://`, "it was deleted after the store opened it; the next `sluice run` creates it again (sink.cloudsearch.indexManagement is CreateIfNotExists)"},
			[]string{adviseCreateIfNotExists, "yet"}},
		{"ValidateIndex", unmanaged(ValidateIndex),
			[]string{`index "docs" does not exist at http://`, "create it with `sluice index create` (with this command's --config if it has one), or " + adviseCreateIfNotExists},
			[]string{"yet", "no longer"}},
		{"NoValidation", unmanaged(NoValidation),
			[]string{`index "docs" does not exist at http://`, "create it with `sluice index create` (with this command's --config if it has one), or " + adviseCreateIfNotExists},
			[]string{"yet", "no longer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.open(t)
			_, statsErr := s.Stats(ctx)
			_, countErr := s.Count(ctx)
			for _, err := range []error{s.ValidateIndex(ctx), statsErr, countErr} {
				var se *ServiceError
				if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || !errors.Is(err, ErrIndexNotFound) || !errors.Is(err, sink.ErrUnavailable) {
					t.Errorf("%v: want a 404 *ServiceError wrapping ErrIndexNotFound and sink.ErrUnavailable", err)
					continue
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%q lacks %q", err, w)
					}
				}
				for _, w := range tt.notWant {
					if strings.Contains(err.Error(), w) {
						t.Errorf("%q has %q", err, w)
					}
				}
			}
		})
	}
}

// TestDoctorIndexToBeCreated: with CreateIfNotExists, Doctor passes an
// index that does not exist yet, with a note that the first run creates
// it, and compares the embedder's dimensions with embeddingDimensionality,
// those the index will be created with; with ValidateIndex or
// NoValidation a missing index fails the check, with the remedy of
// ErrIndexNotFound. Doctor creates no index.
func TestDoctorIndexToBeCreated(t *testing.T) {
	ctx := context.Background()
	const note = "does not exist yet: the first `sluice run` creates it (sink.cloudsearch.indexManagement is CreateIfNotExists)"

	s, srv := openUnmanaged(t, CreateIfNotExists)
	checks := s.Doctor(ctx, testDims)
	if len(checks) != 3 || !checks[0].OK ||
		checks[1] != (Check{Name: "index docs", OK: true, Detail: note}) ||
		checks[2] != (Check{Name: "embedder dimensions", OK: true, Detail: "the first run creates the index with embeddingDimensionality 8, the embedder's dimensions"}) {
		t.Errorf("checks = %+v; want the endpoint, the index to be created and the embedder's dimensions, all passed", checks)
	}
	if checks := s.Doctor(ctx, 0); len(checks) != 2 || !checks[1].OK {
		t.Errorf("without the embedder's dimensions: checks = %+v; want the endpoint and the index to be created", checks)
	}
	checks = s.Doctor(ctx, 1536)
	last := checks[len(checks)-1]
	if len(checks) != 3 || !checks[1].OK || last.OK || last.Name != "embedder dimensions" || !errors.Is(last.Err, ErrConfig) ||
		last.Detail != last.Err.Error() || !strings.Contains(last.Detail, "sink.cloudsearch.embeddingDimensionality: is 8") ||
		!strings.Contains(last.Detail, "the embedder returns 1536-dimensional vectors") || !strings.Contains(last.Detail, "set embeddingDimensionality to the embedding model's output size (1536)") {
		t.Errorf("with a 1536-dimension embedder: checks = %+v; want the embedder's dimensions failed, naming the setting", checks)
	}
	if _, ok := srv.Index("docs"); ok {
		t.Error("Doctor created the index")
	}

	for _, m := range []IndexManagement{ValidateIndex, NoValidation} {
		s, srv := openUnmanaged(t, m)
		checks := s.Doctor(ctx, testDims)
		last := checks[len(checks)-1]
		if len(checks) != 2 || last.OK || last.Name != "index docs" || !errors.Is(last.Err, ErrIndexNotFound) ||
			!strings.Contains(last.Detail, "create it with `sluice index create` (with this command's --config if it has one), or "+adviseCreateIfNotExists) {
			t.Errorf("%s: checks = %+v; want the index check failed with ErrIndexNotFound and its remedy", m, checks)
		}
		if _, ok := srv.Index("docs"); ok {
			t.Errorf("%s: Doctor created the index", m)
		}
	}
}
