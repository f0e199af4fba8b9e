package cloudsearch

import (
	"strings"
	"testing"
)

// TestParseCopiedSpellings checks that enumerated values copied from the
// seed, LlamaIndex (TypeScript and Python) or the Azure SDKs parse to the
// canonical value, and that look-alikes outside those spellings do not.
func TestParseCopiedSpellings(t *testing.T) {
	parse := map[string]func(string) (string, error){
		"indexManagement":     func(s string) (string, error) { v, err := ParseIndexManagement(s); return string(v), err },
		"vectorAlgorithmType": func(s string) (string, error) { v, err := ParseVectorAlgorithm(s); return string(v), err },
		"compressionType":     func(s string) (string, error) { v, err := ParseCompression(s); return string(v), err },
		"languageAnalyzer":    ParseLanguageAnalyzer,
		"fieldType":           func(s string) (string, error) { v, err := ParseFieldType(s); return string(v), err },
		"credential":          func(s string) (string, error) { v, err := ParseCredentialKind(s); return string(v), err },
	}
	tests := []struct {
		setting, in, want string // want "" with bad: refused
		bad               bool
	}{
		{"indexManagement", "IndexManagement.CREATE_IF_NOT_EXISTS", string(CreateIfNotExists), false},
		{"indexManagement", "IndexManagement.VALIDATE_INDEX", string(ValidateIndex), false},
		{"indexManagement", "indexmanagement.no_validation", string(NoValidation), false},
		{"indexManagement", "CreateIfNotExists", string(CreateIfNotExists), false},
		{"indexManagement", "Management.CREATE_IF_NOT_EXISTS", "", true}, // not a type name
		{"indexManagement", "IndexManagement.", "", true},

		{"vectorAlgorithmType", "KnownVectorSearchAlgorithmKind.Hnsw", string(HNSW), false},
		{"vectorAlgorithmType", "VectorSearchAlgorithmKind.HNSW", string(HNSW), false},
		{"vectorAlgorithmType", "KnownVectorSearchAlgorithmKind.ExhaustiveKnn", string(ExhaustiveKNN), false},
		{"vectorAlgorithmType", "EXHAUSTIVE_KNN", string(ExhaustiveKNN), false},
		{"vectorAlgorithmType", "exhaustive_knn", string(ExhaustiveKNN), false},
		{"vectorAlgorithmType", "hnsw", string(HNSW), false},
		{"vectorAlgorithmType", "Algorithm.Hnsw", "", true},
		{"vectorAlgorithmType", "ivf", "", true},

		{"compressionType", "SCALAR_QUANTIZATION", string(ScalarQuantization), false},
		{"compressionType", "KnownVectorSearchCompressionKind.BinaryQuantization", string(BinaryQuantization), false},
		{"compressionType", "VectorSearchCompressionKind.SCALAR_QUANTIZATION", string(ScalarQuantization), false},
		{"compressionType", "scalar", string(ScalarQuantization), false},
		{"compressionType", "binary", string(BinaryQuantization), false},
		{"compressionType", "Binary", string(BinaryQuantization), false},
		{"compressionType", "none", string(NoCompression), false},
		{"compressionType", "quantization", "", true},
		{"compressionType", "pq", "", true},

		{"languageAnalyzer", "KnownAnalyzerNames.EnLucene", "en.lucene", false},
		{"languageAnalyzer", "EN_LUCENE", "en.lucene", false},
		{"languageAnalyzer", "LexicalAnalyzerName.ZH_HANS_MICROSOFT", "zh-Hans.microsoft", false},
		{"languageAnalyzer", "KnownLexicalAnalyzerNames.StandardLucene", "standard.lucene", false},
		{"languageAnalyzer", "en.lucene", "en.lucene", false},
		{"languageAnalyzer", "EnLucene", "en.lucene", false},
		{"languageAnalyzer", "KnownAnalyzerNames.Klingon", "", true},
		{"languageAnalyzer", "Analyzers.EnLucene", "", true},

		{"fieldType", "MetadataIndexFieldType.INT32", string(Int32), false},
		{"fieldType", "MetadataIndexFieldType.COLLECTION", string(StringCollection), false},
		{"fieldType", "SearchFieldDataType.Int64", string(Int64), false},
		{"fieldType", "Edm.Int32", string(Int32), false},
		{"fieldType", "Collection(Edm.String)", string(StringCollection), false},
		{"fieldType", "date_time", string(DateTimeOffset), false},
		{"fieldType", "FieldType.INT32", "", true},
		{"fieldType", "INT8", "", true},

		{"credential", "AzureKeyCredential", string(KeyCredential), false},
		{"credential", "azurekeycredential", string(KeyCredential), false},
		{"credential", "KeyCredential", string(KeyCredential), false},
		{"credential", "DefaultAzureCredential", string(DefaultCredential), false},
		{"credential", "ManagedIdentityCredential", string(ManagedIdentity), false},
		{"credential", "managed_identity", string(ManagedIdentity), false},
		{"credential", "AzureCredential", "", true},
		{"credential", "password", "", true},

		// Underscores alone are no value: not the default "" means.
		{"indexManagement", "_", "", true},
		{"indexManagement", "IndexManagement.__", "", true},
		{"vectorAlgorithmType", "_", "", true},
		{"compressionType", "__", "", true},
		{"fieldType", "_", "", true},
		{"fieldType", "MetadataIndexFieldType._", "", true},
		{"languageAnalyzer", "_", "", true},
		{"credential", "_", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.setting+"/"+tt.in, func(t *testing.T) {
			got, err := parse[tt.setting](tt.in)
			switch {
			case tt.bad && err == nil:
				t.Errorf("accepted as %q, want an error", got)
			case !tt.bad && (err != nil || got != tt.want):
				t.Errorf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestCopiedSpellingsInYAML checks the spellings end to end: decoded from
// YAML, validated and normalized to the canonical values.
func TestCopiedSpellingsInYAML(t *testing.T) {
	c, err := decodeConfig(t, `
indexName: docs
credential: AzureKeyCredential
indexManagement: IndexManagement.CREATE_IF_NOT_EXISTS
vectorAlgorithmType: KnownVectorSearchAlgorithmKind.Hnsw
compressionType: scalar
languageAnalyzer: KnownAnalyzerNames.EnLucene
filterableMetadataFieldKeys: {level: [level, MetadataIndexFieldType.INT32]}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	n := c.normalize()
	want := []struct {
		name      string
		got, want any
	}{
		{"credential", n.Credential, KeyCredential},
		{"indexManagement", n.IndexManagement, CreateIfNotExists},
		{"vectorAlgorithmType", n.VectorAlgorithmType, HNSW},
		{"compressionType", n.CompressionType, ScalarQuantization},
		{"languageAnalyzer", n.LanguageAnalyzer, "en.lucene"},
		{"filterable type", n.FilterableMetadataFieldKeys[0].Type, Int32},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("%s = %v, want %v", w.name, w.got, w.want)
		}
	}
}

// TestEnumErrorsListCanonicalSpellings checks that a refused value is
// answered with the canonical spellings, not the many accepted forms.
func TestEnumErrorsListCanonicalSpellings(t *testing.T) {
	tests := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.IndexManagement = "Sometimes" }, "use NoValidation, ValidateIndex or CreateIfNotExists"},
		{func(c *Config) { c.VectorAlgorithmType = "ivf" }, "use exhaustiveKnn or hnsw"},
		{func(c *Config) { c.CompressionType = "pq" }, "use binaryQuantization, scalarQuantization or leave it empty"},
		{func(c *Config) { c.Credential = "password" }, "use key, default or managedIdentity"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		c.IndexName = "docs"
		tt.mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
}

// TestFilterableMapValueIsATypeName checks that the map form, which maps a
// metadata key to an index field name, refuses a field type in place of
// the name instead of creating a text field named INT32, and suggests the
// pair form; real field names are kept.
func TestFilterableMapValueIsATypeName(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // parts of the error; none: accepted
	}{
		{"INT32", "filterableMetadataFieldKeys: {level: INT32, tags: COLLECTION}",
			[]string{"sink.cloudsearch.filterableMetadataFieldKeys.level line 1", "INT32 is a field type", "did you mean level: [level, INT32]?"}},
		{"COLLECTION", "filterableMetadataFieldKeys:\n  author: author\n  tags: COLLECTION\n",
			[]string{"filterableMetadataFieldKeys.tags line 3", "did you mean tags: [tags, COLLECTION]?"}},
		{"seed type name", "filterableMetadataFieldKeys: {level: MetadataIndexFieldType.INT32}",
			[]string{"did you mean level: [level, MetadataIndexFieldType.INT32]?"}},
		{"Edm type", "filterableMetadataFieldKeys: {score: Edm.Double}",
			[]string{"did you mean score: [score, Edm.Double]?", "for a text field named Edm.Double, write score: [Edm.Double, STRING]"}},
		{"lower case", "filterableMetadataFieldKeys: {year: int32}", []string{"did you mean year: [year, int32]?"}},
		{"field name", "filterableMetadataFieldKeys: {level: level_field}", nil},
		{"empty value", "filterableMetadataFieldKeys: {level: }", nil},
		{"pair", "filterableMetadataFieldKeys: {level: [level, INT32]}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeConfig(t, tt.src)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want the field accepted", err)
				}
				if f := c.FilterableMetadataFieldKeys.normalized(); len(f) != 1 || f[0].Field == "INT32" {
					t.Errorf("fields %+v", f)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted as %+v, want an error", c.FilterableMetadataFieldKeys)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestCredentialKeyNotShown: an admin key pasted into credential is refused
// without being repeated.
func TestCredentialKeyNotShown(t *testing.T) {
	const key = "0123456789ABCDEF0123456789abcdef0123456789AbCdEf"
	_, err := ParseCredentialKind(key)
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("ParseCredentialKind = %v; want an error that does not show the key", err)
	}
}
