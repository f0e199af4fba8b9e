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

// TestThrottledHintFitsTheRequest checks that the remedy a throttled
// request's error gives fits the request: the upload settings for an
// upload, and not for a read (a query, a lookup by id), which they do not
// shape; `sluice query` against a throttled service used to be told to
// lower sink.cloudsearch.uploadConcurrency.
func TestThrottledHintFitsTheRequest(t *testing.T) {
	noRetries := func(c *Config) { c.MaxRetries = -1 }
	tests := []struct {
		name     string
		call     func(ctx context.Context, s *Store, nodes []sink.Node) error
		want     []string
		mustNot  []string
		uploaded bool // whether the nodes are stored before the call
	}{
		{
			name: "upload",
			call: func(ctx context.Context, s *Store, nodes []sink.Node) error {
				_, err := s.Add(ctx, nodes)
				return err
			},
			want: []string{"uploadConcurrency or uploadBatchSize", "maxRetries"},
		},
		{
			name: "query",
			call: func(ctx context.Context, s *Store, nodes []sink.Node) error {
				_, err := s.Query(ctx, sink.Query{Mode: sink.Sparse, QueryStr: "rivers", TopK: 3})
				return err
			},
			want:     []string{"maxRetries", "replicas"},
			mustNot:  []string{"upload"},
			uploaded: true,
		},
		{
			name: "lookup by id",
			call: func(ctx context.Context, s *Store, nodes []sink.Node) error {
				_, err := s.ExistingIDs(ctx, []string{nodes[0].ID})
				return err
			},
			want:     []string{"maxRetries", "replicas"},
			mustNot:  []string{"upload"},
			uploaded: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := startStore(t, searchtest.Options{}, noRetries)
			ctx := context.Background()
			nodes := makeNodes("a.md", 2)
			if tt.uploaded {
				if _, err := s.Add(ctx, nodes); err != nil {
					t.Fatal(err)
				}
				// Reading pages by key: learn now that the key is sortable,
				// so that the throttled request is the read itself.
				if _, err := s.GetNodes(ctx, nil, nil, 1); err != nil {
					t.Fatal(err)
				}
			}
			srv.FailNext(1, http.StatusServiceUnavailable, 0)
			err := tt.call(ctx, s, nodes)
			if !errors.Is(err, ErrThrottled) {
				t.Fatalf("err = %v, want ErrThrottled", err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not mention %q: %s", w, msg)
				}
			}
			for _, w := range tt.mustNot {
				if strings.Contains(msg, w) {
					t.Errorf("error mentions %q, which does not shape this request: %s", w, msg)
				}
			}
		})
	}
}

// TestUpdateMetadataOfLostNodeSaysHowToRepair checks that a node whose
// metadata cannot be updated because the index no longer holds it (it was
// deleted behind Sluice's back, or the index was emptied) says how to get
// it back. A run that reuses such a node's vector keeps failing its
// document with the service's bare "Document not found." otherwise, and
// `sluice failed list` gave no clue that `sluice run --verify` repairs it.
func TestUpdateMetadataOfLostNodeSaysHowToRepair(t *testing.T) {
	s, _ := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	lost := makeNodes("lost.md", 1)[0]
	lost.Embedding = nil
	err := s.UpdateMetadata(ctx, []sink.Node{lost})
	var werr *sink.WriteError
	if !errors.As(err, &werr) || werr.Failed[lost.ID] == nil {
		t.Fatalf("UpdateMetadata = %v, want a WriteError for the node", err)
	}
	var derr *DocumentError
	if !errors.As(werr.Failed[lost.ID], &derr) || derr.StatusCode != http.StatusNotFound {
		t.Fatalf("node error = %v, want a *DocumentError with status 404", werr.Failed[lost.ID])
	}
	msg := derr.Error()
	for _, w := range []string{"no longer holds this node", "sluice run --verify"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not say %q: %s", w, msg)
		}
	}
}
