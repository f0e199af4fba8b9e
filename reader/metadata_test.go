package reader

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestMetadataRules(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"guides/a.md", "guides/deep/b.md", "notes/c.md"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("text"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Dir = root
	cfg.Metadata = []MetadataRule{
		{Match: "guides/**", Set: map[string]any{"audience": "users", "tags": []any{"guide", "howto"}, "level": 1}},
		{Match: "**/deep/*.md", Set: map[string]any{"level": 2}},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	err := Walk(context.Background(), cfg, func(f File, err error) error {
		if err != nil {
			return err
		}
		extra := map[string]any{}
		for k, v := range f.Metadata {
			if k == "audience" || k == "tags" || k == "level" {
				extra[k] = v
			}
		}
		got[f.ID] = extra
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"guides/a.md":      {"audience": "users", "tags": []string{"guide", "howto"}, "level": 1},
		"guides/deep/b.md": {"audience": "users", "tags": []string{"guide", "howto"}, "level": 2},
		"notes/c.md":       {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	f, err := Stat(cfg, "guides/deep/b.md")
	if err != nil || f.Metadata["level"] != 2 || f.Metadata[KeyFileName] != "b.md" {
		t.Errorf("Stat metadata = %v, %v", f.Metadata, err)
	}
}

// TestExcludeFileMetadata: the file metadata keys that
// source.excludeFileMetadata lists are left out of the documents' metadata,
// by Walk and by Stat alike, and the others and the rules' keys stay.
func TestExcludeFileMetadata(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "app.md"), []byte("a line"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		exclude []string
		want    []string
	}{
		{"none", nil, []string{KeyCreationDate, KeyFileName, KeyFilePath, KeyFileSize, KeyFileType, KeyLastModifiedDate, "team"}},
		{"what a growing file changes", []string{KeyFileSize, KeyLastModifiedDate},
			[]string{KeyCreationDate, KeyFileName, KeyFilePath, KeyFileType, "team"}},
		{"all six", fileKeys, []string{"team"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dir = root
			cfg.ExcludeFileMetadata = tt.exclude
			cfg.Metadata = []MetadataRule{{Match: "*.md", Set: map[string]any{"team": "ops"}}}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			var walked []map[string]any
			err := Walk(context.Background(), cfg, func(f File, err error) error {
				walked = append(walked, f.Metadata)
				return err
			})
			if err != nil || len(walked) != 1 {
				t.Fatalf("Walk: %d files, %v", len(walked), err)
			}
			stat, err := Stat(cfg, "app.md")
			if err != nil {
				t.Fatal(err)
			}
			for via, m := range map[string]map[string]any{"Walk": walked[0], "Stat": stat.Metadata} {
				if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, tt.want) {
					t.Errorf("%s metadata keys %q, want %q", via, got, tt.want)
				}
			}
		})
	}
}

// TestMetadataValuesAccepted: the edges of what metadata holds exactly are
// accepted as they are.
func TestMetadataValuesAccepted(t *testing.T) {
	for _, v := range []any{1 << 53, -1 << 53, int64(1 << 53), uint64(1 << 53), 1e300, -0.5, "∞", true, []any{"a"}} {
		if _, err := metadataValue(v); err != nil {
			t.Errorf("metadataValue(%v) = %v, want it accepted", v, err)
		}
	}
}

func TestMetadataRulesValidate(t *testing.T) {
	tests := []struct {
		name    string
		rule    MetadataRule
		setting string
	}{
		{"reserved key", MetadataRule{Match: "*.md", Set: map[string]any{KeyFileName: "x"}}, "source.metadata[0].set.file_name"},
		{"LlamaIndex's doc_id", MetadataRule{Match: "*.md", Set: map[string]any{"doc_id": "x"}}, "source.metadata[0].set.doc_id"},
		{"LlamaIndex's _node_content", MetadataRule{Match: "*.md", Set: map[string]any{"_node_content": "x"}}, "source.metadata[0].set._node_content"},
		{"nested list", MetadataRule{Match: "*.md", Set: map[string]any{"tags": []any{1}}}, "source.metadata[0].set.tags"},
		{"map value", MetadataRule{Match: "*.md", Set: map[string]any{"x": map[string]any{}}}, "source.metadata[0].set.x"},
		{"empty set", MetadataRule{Match: "*.md"}, "source.metadata[0].set"},
		{"bad glob", MetadataRule{Match: "[", Set: map[string]any{"a": "b"}}, "source.metadata[0].match"},
		{"infinity", MetadataRule{Match: "*.md", Set: map[string]any{"score": math.Inf(1)}}, "source.metadata[0].set.score"},
		{"not a number", MetadataRule{Match: "*.md", Set: map[string]any{"score": math.NaN()}}, "source.metadata[0].set.score"},
		{"beyond 2^53", MetadataRule{Match: "*.md", Set: map[string]any{"n": 1<<53 + 1}}, "source.metadata[0].set.n"},
		{"below -2^53", MetadataRule{Match: "*.md", Set: map[string]any{"n": int64(-1<<53 - 1)}}, "source.metadata[0].set.n"},
		{"beyond int64", MetadataRule{Match: "*.md", Set: map[string]any{"n": uint64(12345678901234567890)}}, "source.metadata[0].set.n"},
		{"date", MetadataRule{Match: "*.md", Set: map[string]any{"d": time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}}, "source.metadata[0].set.d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Metadata = []MetadataRule{tt.rule}
			err := cfg.Validate()
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != tt.setting {
				t.Errorf("Validate = %v, want a ConfigError naming %s", err, tt.setting)
			}
		})
	}
}

// TestMetadataRulesValidateSameKeyEveryTime: a rule with several wrong
// values is reported by the same key (the first in key order) on every
// run; it used to be whichever key map iteration met first.
func TestMetadataRulesValidateSameKeyEveryTime(t *testing.T) {
	set := map[string]any{"nul": nil, "nums": []any{1, 2}, "mixed": []any{"a", 1}, "obj": map[string]any{"a": "b"}, "ok": "fine"}
	for range 50 {
		cfg := DefaultConfig()
		cfg.Metadata = []MetadataRule{{Match: "**", Set: set}}
		var ce *ConfigError
		if err := cfg.Validate(); !errors.As(err, &ce) || ce.Setting != "source.metadata[0].set.mixed" {
			t.Fatalf("Validate = %v, want a ConfigError naming source.metadata[0].set.mixed, the first wrong key in order", err)
		}
	}
}
