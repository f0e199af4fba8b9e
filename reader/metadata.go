package reader

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

// MetadataRule adds metadata to the documents whose root-relative path
// matches a glob, for filtering at query time (for example tags as a
// COLLECTION field of Cloud AI Search). Rules apply in order; a later rule
// overrides a key set by an earlier one.
//
//	source:
//	  metadata:
//	    - match: "guides/**"
//	      set: {audience: users, tags: [guide, howto], level: 2}
type MetadataRule struct {
	// Match is a glob with the same rules as source.include.
	Match string `yaml:"match"`
	// Set maps metadata keys to a string, a number, a bool, or a list of
	// strings. The keys of the file metadata (file_path, file_name, ...)
	// cannot be set.
	Set map[string]any `yaml:"set"`
}

var fileKeys = []string{KeyFilePath, KeyFileName, KeyFileType, KeyFileSize, KeyCreationDate, KeyLastModifiedDate}

// validateFileKeys checks source.excludeFileMetadata: each entry names a
// key of the file metadata, once.
func validateFileKeys(keys []string) error {
	for i, k := range keys {
		setting := "source.excludeFileMetadata[" + strconv.Itoa(i) + "]"
		if !slices.Contains(fileKeys, k) {
			return &ConfigError{Setting: setting,
				Reason: strconv.Quote(k) + " is not a key of the file metadata; use " + strings.Join(fileKeys, ", ")}
		}
		if first := slices.Index(keys, k); first < i {
			return &ConfigError{Setting: setting,
				Reason: strconv.Quote(k) + " is listed twice (also at [" + strconv.Itoa(first) + "]); remove one"}
		}
	}
	return nil
}

// validateMetadata checks source.metadata and normalises list values to
// []string and whole numbers to int.
func validateMetadata(rules []MetadataRule) error {
	for i, r := range rules {
		setting := "source.metadata[" + strconv.Itoa(i) + "]"
		if err := validatePattern(setting+".match", r.Match); err != nil {
			return err
		}
		if len(r.Set) == 0 {
			return &ConfigError{Setting: setting + ".set", Reason: "is empty; give at least one key: value"}
		}
		// In key order, so that a rule with several wrong values is
		// reported by the same one every time.
		for _, k := range slices.Sorted(maps.Keys(r.Set)) {
			v := r.Set[k]
			if strings.TrimSpace(k) == "" {
				return &ConfigError{Setting: setting + ".set", Reason: "has an empty key"}
			}
			for _, fk := range fileKeys {
				if k == fk {
					return &ConfigError{Setting: setting + ".set." + k, Reason: "is file metadata set by the reader; choose another key"}
				}
			}
			if sink.ReservedMetadataKey(k) {
				return &ConfigError{Setting: setting + ".set." + k, Reason: "is a key LlamaIndex's node format keeps for the node itself; choose another key"}
			}
			if _, err := metadataValue(v); err != nil {
				return &ConfigError{Setting: setting + ".set." + k, Reason: err.Error()}
			}
		}
	}
	return nil
}

// maxExactInt is the largest whole number metadata can hold exactly: 2^53,
// beyond which JSON readers (LlamaIndex's included) round it as a float64.
const maxExactInt = 1 << 53

// metadataValue normalises a YAML value to a metadata value.
func metadataValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case int:
		return x, checkExactInt(x > maxExactInt || x < -maxExactInt)
	case int64:
		return x, checkExactInt(x > maxExactInt || x < -maxExactInt)
	case uint64: // beyond int64: YAML decodes it so
		return x, checkExactInt(x > maxExactInt)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("is %v, which metadata (JSON) cannot hold; use a finite number, or quote it to keep it as a string", x)
		}
		return x, nil
	case time.Time:
		return nil, errors.New("is a date, which YAML reads as a timestamp; quote it (\"2024-01-01\") to keep it as a string")
	case []string:
		return x, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("is a list holding %s; lists must hold strings (a COLLECTION field)", sink.Kind(e))
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("is %s; use a string, a number, a bool or a list of strings", sink.Kind(v))
}

// checkExactInt refuses a whole number beyond ±2^53 (tooLarge).
func checkExactInt(tooLarge bool) error {
	if tooLarge {
		return fmt.Errorf("is a whole number beyond ±%d, which metadata (JSON) cannot hold exactly; quote it to keep it as a string", maxExactInt)
	}
	return nil
}

// applyMetadata drops the file metadata keys the configuration excludes
// from f and adds the metadata of the matching rules.
func (m *matcher) applyMetadata(f *File) {
	for _, k := range m.dropFileKeys {
		delete(f.Metadata, k)
	}
	for _, r := range m.rules {
		if !r.pattern.matches(f.ID) {
			continue
		}
		if f.Metadata == nil {
			f.Metadata = make(map[string]any)
		}
		maps.Copy(f.Metadata, r.set)
	}
}

// metadataRule is a compiled MetadataRule.
type metadataRule struct {
	pattern pattern
	set     map[string]any
}

func compileRules(rules []MetadataRule) []metadataRule {
	out := make([]metadataRule, 0, len(rules))
	for _, r := range rules {
		set := make(map[string]any, len(r.Set))
		for k, v := range r.Set {
			if nv, err := metadataValue(v); err == nil {
				set[k] = nv
			}
		}
		out = append(out, metadataRule{pattern: newPattern(r.Match), set: set})
	}
	return out
}
