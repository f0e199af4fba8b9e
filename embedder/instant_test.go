package embedder_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
)

func TestInstant(t *testing.T) {
	e, err := embedder.New(context.Background(), embedder.Config{Provider: embedder.ProviderInstant, Dimensions: 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*embedder.Instant); !ok || e.Dimensions() != 64 {
		t.Fatalf("New(instant) = %T with %d dimensions, want *Instant with 64", e, e.Dimensions())
	}
	vecs, err := e.Embed(context.Background(), []embedder.Input{{Text: "a"}, {Text: "something else"}})
	if err != nil || len(vecs) != 2 {
		t.Fatalf("Embed = %d vectors, %v", len(vecs), err)
	}
	for i, v := range vecs {
		if len(v) != 64 || math.Abs(norm(v)-1) > 1e-6 {
			t.Errorf("vector %d: %d floats of norm %v, want 64 of norm 1", i, len(v), norm(v))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []embedder.Input{{Text: "a"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed after cancel = %v, want context.Canceled", err)
	}
	if err := (embedder.Config{Provider: "instant", BatchSize: 5000}).Validate(); err != nil {
		t.Errorf("instant has no request cap, but Validate = %v", err)
	}
}
