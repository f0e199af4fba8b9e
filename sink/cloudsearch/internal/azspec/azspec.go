// Package azspec holds the rules of the Cloud AI Search (Azure AI Search)
// REST API that both the store (sink/cloudsearch) and its test double
// (sink/cloudsearch/searchtest) enforce, so the two cannot drift apart: the
// index naming rule, the range of vector dimensions and the predefined
// lexical analyzers (the LexicalAnalyzerName enum of the official
// definitions, generated into lexical_analyzers.go by gen.go); and the
// published API versions, which the double accepts.
package azspec

//go:generate go run gen.go

import (
	"fmt"
	"strings"
)

// Limits of an index name.
const (
	MinIndexNameLen = 2
	MaxIndexNameLen = 128
)

// Range of the dimensions of a vector field (Collection(Edm.Single)).
//
// Microsoft's current documentation of vector fields gives 2 to 4096
// dimensions (older revisions said 3072), while the swagger of api-version
// 2024-07-01 caps SearchField.dimensions at 2048: the definitions lag
// behind the service. The store and the test double follow the
// documentation; the double's schema validation overrides the swagger's
// maximum with MaxVectorDimensions.
const (
	MinVectorDimensions = 2
	MaxVectorDimensions = 4096
)

// APIVersions are the data-plane api-version values Microsoft publishes
// for the service (its REST API versions page, read 2026-11-21) from the
// first with vector search in the form the store uses (vectorQueries,
// vectorSearch profiles) on; the service refuses unpublished ones with 400
// "Invalid or missing api-version". Older published versions (2019-05-06,
// 2020-06-30 and their previews, 2021-04-30-preview, 2023-07-01-preview)
// have no such vector search.
var APIVersions = []string{
	"2023-11-01", "2024-07-01", "2025-09-01",
	"2023-10-01-preview", "2024-03-01-preview", "2024-05-01-preview", "2024-09-01-preview",
	"2024-11-01-preview", "2025-03-01-preview", "2025-05-01-preview", "2025-08-01-preview", "2025-11-01-preview",
}

// OlderAPIVersions are the data-plane api-version values Microsoft
// published before vector search took the form the store uses: the service
// may still serve some of them, but not the requests Sluice sends.
var OlderAPIVersions = []string{
	"2019-05-06", "2019-05-06-preview", "2020-06-30", "2020-06-30-preview", "2021-04-30-preview", "2023-07-01-preview",
}

// NewestAPIVersion returns the most recent of APIVersions by date (a
// stable version before a preview of the same date).
func NewestAPIVersion() string {
	newest := APIVersions[0]
	for _, v := range APIVersions[1:] {
		if d, nd := v[:len("2006-01-02")], newest[:len("2006-01-02")]; d > nd || d == nd && len(v) < len(newest) {
			newest = v
		}
	}
	return newest
}

// AfterPublished reports whether the api-version v (YYYY-MM-DD or
// YYYY-MM-DD-preview) is dated after every one of APIVersions: a version
// Microsoft may have published after the list was read. Any other version
// outside the list is not one the service publishes for Sluice's requests.
func AfterPublished(v string) bool {
	const date = len("2006-01-02")
	return len(v) >= date && v[:date] > NewestAPIVersion()[:date]
}

// KnownAPIVersion reports whether v is one of APIVersions; the suffix is
// matched without regard to case (older documentation spells it
// "-Preview").
func KnownAPIVersion(v string) bool {
	for _, k := range APIVersions {
		if strings.EqualFold(v, k) {
			return true
		}
	}
	return false
}

// IndexNameRule states the service's naming rule for indexes, for error
// messages.
const IndexNameRule = "index names have 2 to 128 characters: lowercase letters, digits or dashes, starting and ending with a letter or digit, with no consecutive dashes"

// IndexNameError reports an index name the service refuses.
type IndexNameError struct {
	Name    string // the name as given
	Problem string // which part of the rule it breaks
}

// Error quotes the name, says what is wrong with it and gives the naming
// rule.
func (e *IndexNameError) Error() string {
	return fmt.Sprintf("%q is not a valid index name: %s; %s", e.Name, e.Problem, IndexNameRule)
}

// CheckIndexName returns an *IndexNameError when name breaks the naming
// rule of indexes (see IndexNameRule), else nil.
//
// The rule is the intersection of what Microsoft documents: the naming
// rules chart (2 to 128 lowercase characters, the first a letter or digit,
// no consecutive dashes) and the Create Index reference (only lowercase
// letters, digits or dashes, not starting or ending with a dash). Newer
// revisions of the chart also allow underscores; they are refused here, so
// that every accepted name is valid under every revision.
func CheckIndexName(name string) error {
	problem := ""
	if i := strings.IndexFunc(name, func(r rune) bool { return !isLowerAlnum(r) && r != '-' }); i >= 0 {
		problem = fmt.Sprintf("it contains %q", []rune(name[i:])[0])
	}
	switch {
	case problem != "":
	case len(name) < MinIndexNameLen, len(name) > MaxIndexNameLen:
		problem = fmt.Sprintf("it has %d character%s", len(name), plural(len(name)))
	case name[0] == '-':
		problem = "it starts with a dash"
	case name[len(name)-1] == '-':
		problem = "it ends with a dash"
	case strings.Contains(name, "--"):
		problem = "it has consecutive dashes"
	}
	if problem == "" {
		return nil
	}
	return &IndexNameError{Name: name, Problem: problem}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isLowerAlnum(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }

// LexicalAnalyzer is one value of the LexicalAnalyzerName enum.
type LexicalAnalyzer struct {
	Value string // the REST value, e.g. en.lucene
	Name  string // the x-ms-enum name, e.g. EnLucene
}

// LexicalAnalyzers returns the predefined analyzers of the REST API, in the
// order of the definitions.
func LexicalAnalyzers() []LexicalAnalyzer {
	return append([]LexicalAnalyzer(nil), lexicalAnalyzers[:]...)
}

var (
	byValue = map[string]bool{} // the REST values
	// byFold maps each REST value lower-cased and its identifier key to
	// the REST value.
	byFold = map[string]string{}
)

func init() {
	for _, a := range lexicalAnalyzers {
		byValue[a.Value] = true
		byFold[strings.ToLower(a.Value)] = a.Value
		byFold[IdentifierKey(a.Value)] = a.Value
	}
}

// IdentifierKey is the key under which the identifier form of a REST
// value is looked up: the value lower-cased, without its dots and dashes.
// The SDKs' KnownAnalyzerNames identifiers (EnLucene, ZhHansMicrosoft,
// StandardAsciiFoldingLucene; PtBrLucene in the definitions, PtBRLucene in
// the JavaScript SDK) reduce to the same key when lower-cased.
func IdentifierKey(s string) string {
	return strings.ToLower(strings.NewReplacer(".", "", "-", "").Replace(s))
}

// IsLexicalAnalyzer reports whether v is exactly a REST value of the
// LexicalAnalyzerName enum.
func IsLexicalAnalyzer(v string) bool {
	return byValue[v]
}

// ResolveAnalyzer returns the REST value named by s: a REST value of the
// LexicalAnalyzerName enum in any case (en.lucene, zh-Hans.microsoft), or
// its identifier (EnLucene, StandardLucene, Keyword), also in any case.
func ResolveAnalyzer(s string) (string, bool) {
	v, ok := byFold[strings.ToLower(s)]
	return v, ok
}
