package azspec

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

const specFile = "../../../../../shared/azure-search-spec/2024-07-01/searchservice.json"

// TestAnalyzerTableMatchesSpec checks that lexical_analyzers.go is the
// LexicalAnalyzerName enum of the official definitions, value for value.
func TestAnalyzerTableMatchesSpec(t *testing.T) {
	raw, err := os.ReadFile(specFile)
	if err != nil {
		if testenv.InCI() {
			t.Fatalf("official swagger not found at %s, and CI is set: CI must check out shared/ beside the repository: %v", specFile, err)
		}
		t.Skipf("official swagger not found at %s (clone shared/ beside the repository): %v", specFile, err)
	}
	var doc struct {
		Definitions map[string]struct {
			Enum    []string `json:"enum"`
			XMSEnum struct {
				Values []LexicalAnalyzer `json:"values"`
			} `json:"x-ms-enum"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Definitions["LexicalAnalyzerName"]
	got := LexicalAnalyzers()
	if len(got) != len(e.Enum) || len(got) != len(e.XMSEnum.Values) {
		t.Fatalf("table has %d analyzers, the spec %d (x-ms-enum %d); run go generate", len(got), len(e.Enum), len(e.XMSEnum.Values))
	}
	for i, v := range e.Enum {
		if got[i].Value != v || got[i] != e.XMSEnum.Values[i] {
			t.Errorf("entry %d = %+v, spec has %q / %+v; run go generate", i, got[i], v, e.XMSEnum.Values[i])
		}
	}
}

// TestIdentifierKeysDeriveFromValues checks that every identifier of the
// definitions is its REST value lower-cased without dots and dashes, and
// that no two values share a key, so the identifier form is unambiguous.
func TestIdentifierKeysDeriveFromValues(t *testing.T) {
	seen := map[string]string{}
	for _, a := range LexicalAnalyzers() {
		k := IdentifierKey(a.Value)
		if k != strings.ToLower(a.Name) {
			t.Errorf("%s: key %q, identifier %s", a.Value, k, a.Name)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("%s and %s share the key %q", prev, a.Value, k)
		}
		seen[k] = a.Value
	}
}

func TestResolveAnalyzer(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"en.lucene", "en.lucene", true},
		{"EnLucene", "en.lucene", true},
		{"enlucene", "en.lucene", true},
		{"EN.LUCENE", "en.lucene", true},
		{"StandardLucene", "standard.lucene", true},
		{"standard.lucene", "standard.lucene", true},
		{"StandardAsciiFoldingLucene", "standardasciifolding.lucene", true},
		{"ZhHansMicrosoft", "zh-Hans.microsoft", true},
		{"zh-hans.microsoft", "zh-Hans.microsoft", true},
		{"PtBrLucene", "pt-BR.lucene", true},       // the definitions' identifier
		{"PtBRMicrosoft", "pt-BR.microsoft", true}, // the JavaScript SDK's
		{"SrCyrillicMicrosoft", "sr-cyrillic.microsoft", true},
		{"Keyword", "keyword", true},
		{"whitespace", "whitespace", true},
		{"", "", false},
		{"english", "", false},
		{"en.luscene", "", false},
		{"en_lucene", "", false},
		{"En.Lucene.X", "", false},
		{"EnLuceneX", "", false},
		{"en lucene", "", false},
		{"my_analyzer", "", false},
	}
	for _, tt := range tests {
		got, ok := ResolveAnalyzer(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResolveAnalyzer(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	for _, a := range LexicalAnalyzers() {
		for _, in := range []string{a.Value, a.Name} {
			if got, ok := ResolveAnalyzer(in); !ok || got != a.Value {
				t.Errorf("ResolveAnalyzer(%q) = %q, %v; want %q", in, got, ok, a.Value)
			}
		}
		if !IsLexicalAnalyzer(a.Value) {
			t.Errorf("IsLexicalAnalyzer(%q) = false", a.Value)
		}
	}
	if IsLexicalAnalyzer("EnLucene") || IsLexicalAnalyzer("EN.LUCENE") {
		t.Error("IsLexicalAnalyzer accepts a name that is not a REST value")
	}
}

func TestCheckIndexName(t *testing.T) {
	tests := []struct {
		name    string
		problem string // "" means valid
	}{
		{"ab", ""},
		{"a1", ""},
		{"12", ""},
		{"a-b", ""},
		{"docs-2024-v1", ""},
		{strings.Repeat("a", 128), ""},
		{"", "0 characters"},
		{"a", "1 character;"},
		{strings.Repeat("a", 129), "129 characters"},
		{"-ab", "starts with a dash"},
		{"ab-", "ends with a dash"},
		{"a--b", "consecutive dashes"},
		{"Ab", `contains 'A'`},
		{"a_b", `contains '_'`},
		{"a.b", `contains '.'`},
		{"é1", `contains 'é'`},
		{"a b", `contains ' '`},
	}
	for _, tt := range tests {
		err := CheckIndexName(tt.name)
		if tt.problem == "" {
			if err != nil {
				t.Errorf("CheckIndexName(%q) = %v, want nil", tt.name, err)
			}
			continue
		}
		var ne *IndexNameError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tt.problem) || !strings.Contains(err.Error(), IndexNameRule) {
			t.Errorf("CheckIndexName(%q) = %v, want an *IndexNameError saying %q and the rule", tt.name, err, tt.problem)
		}
	}
}
