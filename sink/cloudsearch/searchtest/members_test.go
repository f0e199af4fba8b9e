package searchtest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink/cloudsearch"
)

// TestUnknownMembersRefused checks that the server, with the official
// definitions, answers 400 naming the member and its place for a member of
// an index definition, a search request or a batch that the service does
// not know, as the service does instead of ignoring it.
func TestUnknownMembersRefused(t *testing.T) {
	needSpec(t)
	_, url := startWithIndex(t, Options{SpecDir: specDir})
	vs := func(d map[string]any) map[string]any { return d["vectorSearch"].(map[string]any) }
	hnsw := func(d map[string]any, params map[string]any) {
		vs(d)["algorithms"] = append(vs(d)["algorithms"].([]any),
			map[string]any{"name": "hnsw-algo", "kind": "hnsw", "hnswParameters": params})
	}
	index := func(edit func(d map[string]any)) func(*testing.T) any {
		return func(t *testing.T) any { return withIndex(t, edit) }
	}
	body := func(b string) func(*testing.T) any { return func(*testing.T) any { return b } }
	const put, search, batch = "/indexes/sluice-test", "/indexes/sluice-test/docs/search", "/indexes/sluice-test/docs/index"
	tests := []struct {
		name, path string
		body       func(t *testing.T) any
		want       []string // in the message
	}{
		{"misspelled field attribute", put, index(func(d map[string]any) { fieldAt(d, 0)["filterabel"] = true }),
			[]string{"definition : The property 'filterabel' (at '/fields/0/filterabel') does not exist on type 'SearchField'"}},
		{"unknown field attribute set to null", put, index(func(d map[string]any) { fieldAt(d, 4)["normalizer"] = nil }),
			[]string{"'normalizer'", "'/fields/4/normalizer'", "'SearchField'"}},
		{"misspelled index property", put, index(func(d map[string]any) { d["vectorSerch"] = d["vectorSearch"] }),
			[]string{"The property 'vectorSerch' (at '/vectorSerch') does not exist on type 'SearchIndex'"}},
		{"misspelled hnsw parameter", put, index(func(d map[string]any) {
			hnsw(d, map[string]any{"m": 4, "efConstrucion": 400, "metric": "cosine"})
		}), []string{"'efConstrucion' (at '/vectorSearch/algorithms/1/hnswParameters/efConstrucion')", "type 'HnswParameters'"}},
		{"misspelled exhaustive knn parameter", put, index(func(d map[string]any) {
			vs(d)["algorithms"].([]any)[0].(map[string]any)["exhaustiveKnnParameters"] = map[string]any{"metrc": "cosine"}
		}), []string{"'metrc' (at '/vectorSearch/algorithms/0/exhaustiveKnnParameters/metrc')", "type 'ExhaustiveKnnParameters'"}},
		{"parameters of another algorithm kind", put, index(func(d map[string]any) {
			vs(d)["algorithms"].([]any)[0].(map[string]any)["hnswParameters"] = map[string]any{"m": 4}
		}), []string{"'hnswParameters' (at '/vectorSearch/algorithms/0/hnswParameters')", "type 'ExhaustiveKnnVectorSearchAlgorithmConfiguration'"}},
		{"misspelled profile property", put, index(func(d map[string]any) {
			vs(d)["profiles"].([]any)[0].(map[string]any)["algorithmName"] = "default-algo"
		}), []string{"'algorithmName' (at '/vectorSearch/profiles/0/algorithmName')", "type 'VectorSearchProfile'"}},
		{"misspelled compression property", put, index(func(d map[string]any) {
			vs(d)["compressions"] = []any{map[string]any{"name": "c", "kind": "scalarQuantization",
				"scalarQuantizationParameters": map[string]any{"quantizedDataType": "int8"}, "rerankWithOriginalVector": true}}
		}), []string{"'rerankWithOriginalVector' (at '/vectorSearch/compressions/0/rerankWithOriginalVector')", "type 'ScalarQuantizationVectorSearchCompressionConfiguration'"}},
		{"misspelled semantic property", put, index(func(d map[string]any) {
			sem := d["semantic"].(map[string]any)["configurations"].([]any)[0].(map[string]any)
			sem["prioritizedFields"].(map[string]any)["prioritizedContentField"] = []any{}
		}), []string{"'prioritizedContentField' (at '/semantic/configurations/0/prioritizedFields/prioritizedContentField')", "type 'PrioritizedFields'"}},
		{"misspelled custom analyzer property", put, index(func(d map[string]any) {
			d["analyzers"] = []any{map[string]any{"@odata.type": "#Microsoft.Azure.Search.CustomAnalyzer", "name": "a", "tokenizerName": "standard_v2"}}
		}), []string{"'tokenizerName' (at '/analyzers/0/tokenizerName')", "type 'CustomAnalyzer'",
			"The body does not match the schema either: ", "missing property 'tokenizer'"}},
		{"unknown search parameter", search, body(`{"search": "fox", "semanticConfigurationName": "default-semantic"}`),
			[]string{"parameters : The parameter 'semanticConfigurationName' (at '/semanticConfigurationName') in the request payload is not a valid parameter for the operation 'search'."}},
		{"misspelled vector query property", search, body(`{"vectorQueries": [{"kind": "vector", "vector": [1, 0, 0], "fields": "embedding", "kNearestNeighbors": 3}]}`),
			[]string{"parameters : The property 'kNearestNeighbors' (at '/vectorQueries/0/kNearestNeighbors') does not exist on type 'RawVectorQuery'"}},
		{"unknown batch parameter", batch, body(`{"value": [{"@search.action": "delete", "id": "a1"}], "atomic": true}`),
			[]string{"The parameter 'atomic' (at '/atomic') in the request payload is not a valid parameter for the operation 'index'."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.path == put {
				method = http.MethodPut
			}
			st, b := call(t, url, method, tt.path, tt.body(t))
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if st != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Code != "InvalidRequestBody" ||
				!strings.HasPrefix(e.Error.Message, "The request is invalid. Details: ") {
				t.Fatalf("got %d %s, want 400 {\"error\": {\"code\": \"InvalidRequestBody\", \"message\": \"The request is invalid. Details: ...\"}}", st, b)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.Error.Message, w) {
					t.Errorf("message %q does not contain %q", e.Error.Message, w)
				}
			}
		})
	}
}

// TestUnknownMembersBelowPolymorphicTypes checks the member check through
// the subtypes the discriminators ("kind", "@odata.type", "type") select,
// and that each subtype keeps the members of its base.
func TestUnknownMembersBelowPolymorphicTypes(t *testing.T) {
	set := loadTestSchemas(t)
	const fields = `"fields": [{"name": "id", "type": "Edm.String", "key": true}]`
	tests := []struct {
		name, def, body string
		typ, at         string // "" typ: accepted
		also            string // the schema's finding the error must carry too
	}{
		{"tokenizer", "SearchIndex", `{"name": "x", ` + fields + `, "tokenizers": [
			{"@odata.type": "#Microsoft.Azure.Search.PatternTokenizer", "name": "t", "pattern": "\\W+", "flag": "CASE_INSENSITIVE"}]}`,
			"PatternTokenizer", "/tokenizers/0/flag", ""},
		{"token filter of another kind", "SearchIndex", `{"name": "x", ` + fields + `, "tokenFilters": [
			{"@odata.type": "#Microsoft.Azure.Search.LengthTokenFilter", "name": "f", "min": 1, "maxTokenCount": 5}]}`,
			"LengthTokenFilter", "/tokenFilters/0/maxTokenCount", ""},
		{"char filter", "SearchIndex", `{"name": "x", ` + fields + `, "charFilters": [
			{"@odata.type": "#Microsoft.Azure.Search.MappingCharFilter", "name": "c", "mapping": ["a=>b"]}]}`,
			"MappingCharFilter", "/charFilters/0/mapping", "missing property 'mappings'"},
		{"similarity", "SearchIndex", `{"name": "x", ` + fields + `, "similarity": {"@odata.type": "#Microsoft.Azure.Search.BM25Similarity", "k": 1.2}}`,
			"BM25Similarity", "/similarity/k", ""},
		{"scoring function", "SearchIndex", `{"name": "x", ` + fields + `, "scoringProfiles": [{"name": "p", "functions": [
			{"type": "freshness", "fieldName": "d", "boost": 2, "freshness": {"boostingDuration": "P1D"}, "interpolation": "linear", "tag": {"tagsParameter": "t"}}]}]}`,
			"FreshnessScoringFunction", "/scoringProfiles/0/functions/0/tag", ""},
		{"vectorizer", "SearchIndex", `{"name": "x", ` + fields + `, "vectorSearch": {"vectorizers": [
			{"name": "v", "kind": "azureOpenAI", "azureOpenAIParameters": {"resourceUri": "https://a.openai.azure.com", "deploymentName": "d"}}]}}`,
			"AzureOpenAIParameters", "/vectorSearch/vectorizers/0/azureOpenAIParameters/deploymentName", ""},
		{"sub-field", "SearchIndex", `{"name": "x", "fields": [{"name": "id", "type": "Edm.String", "key": true},
			{"name": "a", "type": "Edm.ComplexType", "fields": [{"name": "b", "type": "Edm.String", "facetabel": true}]}]}`,
			"SearchField", "/fields/1/fields/0/facetabel", ""},
		{"suggester", "SearchIndex", `{"name": "x", ` + fields + `, "suggesters": [{"name": "s", "searchMode": "analyzingInfixMatching", "sourceField": ["id"]}]}`,
			"Suggester", "/suggesters/0/sourceField", "missing property 'sourceFields'"},
		{"cors", "SearchIndex", `{"name": "x", ` + fields + `, "corsOptions": {"allowedOrigins": ["*"], "maxAge": 60}}`,
			"CorsOptions", "/corsOptions/maxAge", ""},
		{"pointer escaping", "SearchIndex", `{"name": "x", "fields": [{"name": "id", "type": "Edm.String", "key": true, "a/b~c": 1}]}`,
			"SearchField", "/fields/0/a~1b~0c", ""},

		{"base members of a subtype", "SearchIndex", `{"name": "x", ` + fields + `, "vectorSearch": {
			"algorithms": [{"name": "h", "kind": "hnsw", "hnswParameters": {"m": 4, "efConstruction": 400, "efSearch": 500, "metric": "cosine"}}],
			"compressions": [{"name": "b", "kind": "binaryQuantization", "rerankWithOriginalVectors": true, "defaultOversampling": 10}],
			"profiles": [{"name": "p", "algorithm": "h", "compression": "b"}]}}`, "", "", ""},
		{"annotations", "SearchIndex", `{"@odata.context": "https://x.search.windows.net/$metadata#indexes/$entity", "@odata.etag": "\"0x1\"",
			"name": "x", "fields": [{"name": "id", "type": "Edm.String", "key": true, "@odata.type": "#Microsoft.Azure.Search.Field"}],
			"analyzers": [{"@odata.type": "#Microsoft.Azure.Search.StandardAnalyzer", "name": "a", "maxTokenLength": 100}],
			"vectorSearch": {"algorithms": [{"name": "k", "kind": "exhaustiveKnn", "@search.note": "annotated"}]}}`, "", "", ""},
		{"search annotations", "SearchRequest", `{"@odata.type": "#Microsoft.Azure.Search.SearchRequest", "search": "*",
			"vectorQueries": [{"kind": "vector", "vector": [1], "@search.note": "annotated"}]}`, "", "", ""},
		{"documents", "IndexBatch", `{"value": [{"@search.action": "upload", "id": "1", "anyField": {"nested": [1]}}]}`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := set.validate(tt.def, []byte(tt.body))
			if tt.typ == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			var um *unknownMemberError
			if !errors.As(err, &um) || !errors.Is(err, errSchema) {
				t.Fatalf("validate = %v, want an *unknownMemberError matching errSchema", err)
			}
			if um.typ != tt.typ || um.at != tt.at {
				t.Errorf("refused %q of type %s, want %q of type %s", um.at, um.typ, tt.at, tt.typ)
			}
			if tt.also == "" && um.schema != nil || !strings.Contains(err.Error(), tt.also) {
				t.Errorf("error %q, want the schema's finding %q", err, tt.also)
			}
		})
	}
}

// TestSinkDefinitionsAccepted checks that the index definitions the sink
// creates (cloudsearch.Config.Definition) in its configurations pass the
// member check and the schema, and that a definition as GET answers it,
// annotations and defaults filled in, can be sent back.
func TestSinkDefinitionsAccepted(t *testing.T) {
	needSpec(t)
	_, url := Start(t, Options{Key: testKey, SpecDir: specDir})
	tests := []struct {
		name string
		edit func(c *cloudsearch.Config)
	}{
		{"defaults", func(*cloudsearch.Config) {}},
		{"hnsw", func(c *cloudsearch.Config) { c.VectorAlgorithmType = cloudsearch.HNSW }},
		{"scalar quantization", func(c *cloudsearch.Config) {
			c.VectorAlgorithmType, c.CompressionType = cloudsearch.HNSW, cloudsearch.ScalarQuantization
		}},
		{"binary quantization", func(c *cloudsearch.Config) {
			c.VectorAlgorithmType, c.CompressionType = cloudsearch.HNSW, cloudsearch.BinaryQuantization
		}},
		{"metadata fields, analyzer, hidden chunk", func(c *cloudsearch.Config) {
			c.LanguageAnalyzer = "en.lucene"
			c.EmbeddingDimensionality = 3072
			c.FilterableMetadataFieldKeys = cloudsearch.FilterableFields{
				{Key: "author", Field: "author", Type: cloudsearch.String},
				{Key: "year", Field: "year", Type: cloudsearch.Int32},
				{Key: "tags", Field: "tags", Type: cloudsearch.StringCollection},
			}
			c.HiddenFieldKeys = []string{"chunk", "secret"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cloudsearch.DefaultConfig()
			c.IndexName = "sluice-test"
			tt.edit(&c)
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if st, b := call(t, url, http.MethodPost, "/indexes", c.Definition()); st != http.StatusCreated {
				t.Fatalf("create: %d %s", st, b)
			}
			defer call(t, url, http.MethodDelete, "/indexes/sluice-test", nil)
			st, got := call(t, url, http.MethodGet, "/indexes/sluice-test", nil)
			if st != http.StatusOK {
				t.Fatalf("get: %d %s", st, got)
			}
			var def map[string]any
			if err := json.Unmarshal(got, &def); err != nil {
				t.Fatal(err)
			}
			def["@odata.context"] = url + "/$metadata#indexes/$entity"
			if st, b := call(t, url, http.MethodPut, "/indexes/sluice-test", def); st != http.StatusOK {
				t.Fatalf("put the definition GET answered: %d %s", st, b)
			}
		})
	}
}
