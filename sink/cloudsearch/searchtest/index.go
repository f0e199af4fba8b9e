package searchtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
)

// index is one stored index: its definition and its documents.
type index struct {
	name     string
	raw      map[string]any // definition as GET answers it, defaults filled in
	fields   []*field
	byName   map[string]*field
	key      *field
	semantic map[string]semanticConfig
	defSem   string // semantic.defaultConfiguration
	docs     map[string]map[string]any
}

// field is one top-level field of an index.
type field struct {
	Name           string `json:"name"`
	Type           string `json:"type"`
	Key            *bool  `json:"key"`
	Retrievable    *bool  `json:"retrievable"`
	Stored         *bool  `json:"stored"`
	Searchable     *bool  `json:"searchable"`
	Filterable     *bool  `json:"filterable"`
	Sortable       *bool  `json:"sortable"`
	Facetable      *bool  `json:"facetable"`
	Dimensions     *int   `json:"dimensions"`
	Profile        string `json:"vectorSearchProfile"`
	Analyzer       string `json:"analyzer"`
	SearchAnalyzer string `json:"searchAnalyzer"`
	IndexAnalyzer  string `json:"indexAnalyzer"`
	Fields         []any  `json:"fields"`

	metric string // vector fields: similarity metric of the profile's algorithm
}

func (f *field) is(b *bool) bool    { return b != nil && *b }
func (f *field) isKey() bool        { return f.is(f.Key) }
func (f *field) retrievable() bool  { return f.is(f.Retrievable) }
func (f *field) searchable() bool   { return f.is(f.Searchable) }
func (f *field) filterable() bool   { return f.is(f.Filterable) }
func (f *field) isVector() bool     { return f.Type == "Collection(Edm.Single)" }
func (f *field) isCollection() bool { return strings.HasPrefix(f.Type, "Collection(") }
func (f *field) elemType() string {
	return strings.TrimSuffix(strings.TrimPrefix(f.Type, "Collection("), ")")
}
func (f *field) isStringField() bool { return f.elemType() == "Edm.String" }

type semanticConfig struct {
	Name   string `json:"name"`
	Fields struct {
		Title    *struct{ FieldName string }  `json:"titleField"`
		Content  []struct{ FieldName string } `json:"prioritizedContentFields"`
		Keywords []struct{ FieldName string } `json:"prioritizedKeywordsFields"`
	} `json:"prioritizedFields"`
}

// names returns the prioritized field names, title first.
func (c semanticConfig) names() []string {
	var out []string
	if c.Fields.Title != nil {
		out = append(out, c.Fields.Title.FieldName)
	}
	for _, f := range c.Fields.Content {
		out = append(out, f.FieldName)
	}
	for _, f := range c.Fields.Keywords {
		out = append(out, f.FieldName)
	}
	return out
}

type indexDef struct {
	Name      string  `json:"name"`
	Fields    []field `json:"fields"`
	Analyzers []struct {
		Name string `json:"name"`
	} `json:"analyzers"`
	VectorSearch *struct {
		Profiles []struct {
			Name        string `json:"name"`
			Algorithm   string `json:"algorithm"`
			Compression string `json:"compression"`
			Vectorizer  string `json:"vectorizer"`
		} `json:"profiles"`
		Algorithms []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
			HNSW *struct {
				Metric string `json:"metric"`
			} `json:"hnswParameters"`
			KNN *struct {
				Metric string `json:"metric"`
			} `json:"exhaustiveKnnParameters"`
		} `json:"algorithms"`
		Compressions []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"compressions"`
	} `json:"vectorSearch"`
	Semantic *struct {
		Default        string           `json:"defaultConfiguration"`
		Configurations []semanticConfig `json:"configurations"`
	} `json:"semantic"`
}

var (
	fieldNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	simpleTypes = map[string]bool{
		"Edm.String": true, "Edm.Int32": true, "Edm.Int64": true, "Edm.Double": true, "Edm.Boolean": true,
		"Edm.DateTimeOffset": true, "Edm.GeographyPoint": true, "Edm.Single": true, "Edm.Half": true,
		"Edm.Int16": true, "Edm.SByte": true, "Edm.Byte": true,
	}
)

// validIndexName applies the service's naming rule for indexes, the rule
// the store's Config.Validate applies too (internal/azspec).
func validIndexName(name string) error {
	var ne *azspec.IndexNameError
	if err := azspec.CheckIndexName(name); errors.As(err, &ne) {
		return fmt.Errorf("the index name '%s' is invalid: %s; %s", name, ne.Problem, azspec.IndexNameRule)
	}
	return nil
}

// parseIndex decodes and checks an index definition as the service does.
func parseIndex(body []byte) (*index, *apiError) {
	var def indexDef
	if err := json.Unmarshal(body, &def); err != nil {
		return nil, badRequest("The request is invalid. Details: the index definition is not valid JSON of the SearchIndex shape: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, badRequest("The request is invalid. Details: the index definition must be a JSON object.")
	}
	if err := validIndexName(def.Name); err != nil {
		return nil, badRequest("The request is invalid. Details: %v.", err)
	}
	ix := &index{name: def.Name, raw: raw, byName: map[string]*field{}, semantic: map[string]semanticConfig{}, docs: map[string]map[string]any{}}
	if err := ix.setFields(def); err != nil {
		return nil, err
	}
	if def.Semantic != nil {
		for _, c := range def.Semantic.Configurations {
			for _, n := range c.names() {
				f, ok := ix.byName[n]
				if !ok || !f.isStringField() {
					return nil, badRequest("The request is invalid. Details: semantic configuration '%s' names field '%s', which is not a string field of the index.", c.Name, n)
				}
				// The attributes are not defaulted yet: unset means true.
				if (f.Searchable != nil && !*f.Searchable) || (f.Retrievable != nil && !*f.Retrievable) {
					return nil, badRequest("The request is invalid. Details: semantic configuration '%s' names field '%s'; the fields of a semantic configuration must be searchable and retrievable.", c.Name, n)
				}
			}
			ix.semantic[c.Name] = c
		}
		ix.defSem = def.Semantic.Default
		if ix.defSem != "" {
			if _, ok := ix.semantic[ix.defSem]; !ok {
				return nil, badRequest("The request is invalid. Details: semantic.defaultConfiguration '%s' is not one of the semantic configurations.", ix.defSem)
			}
		}
	}
	if err := ix.resolveVectorProfiles(def); err != nil {
		return nil, err
	}
	ix.fillDefaults()
	return ix, nil
}

func (ix *index) setFields(def indexDef) *apiError {
	if len(def.Fields) == 0 {
		return badRequest("The request is invalid. Details: fields : the index must have at least one field.")
	}
	custom := map[string]bool{}
	for _, a := range def.Analyzers {
		custom[a.Name] = true
	}
	for i := range def.Fields {
		f := &def.Fields[i]
		if !fieldNameRE.MatchString(f.Name) || len(f.Name) > 128 || strings.HasPrefix(f.Name, "azureSearch") {
			return badRequest("The request is invalid. Details: the field name '%s' is invalid: field names start with a letter, contain only letters, digits or underscores, are at most 128 characters and do not start with 'azureSearch'.", f.Name)
		}
		if _, dup := ix.byName[f.Name]; dup {
			return badRequest("The request is invalid. Details: the field name '%s' is used more than once.", f.Name)
		}
		if f.elemType() == "Edm.ComplexType" {
			return badRequest("The request is invalid. Details: field '%s': Edm.ComplexType fields are not emulated by this test server.", f.Name)
		}
		if !simpleTypes[f.elemType()] {
			return badRequest("The request is invalid. Details: field '%s' has the unknown type '%s'.", f.Name, f.Type)
		}
		if f.isKey() {
			if ix.key != nil {
				return badRequest("The request is invalid. Details: fields '%s' and '%s' are both marked key; an index has exactly one key field.", ix.key.Name, f.Name)
			}
			if f.Type != "Edm.String" {
				return badRequest("The request is invalid. Details: the key field '%s' must be of type Edm.String, not %s.", f.Name, f.Type)
			}
			if f.Retrievable != nil && !*f.Retrievable {
				return badRequest("The request is invalid. Details: the key field '%s' must be retrievable.", f.Name)
			}
			ix.key = f
		}
		if f.Stored != nil && !*f.Stored {
			if f.Retrievable != nil && *f.Retrievable {
				return badRequest("The request is invalid. Details: field '%s' is not stored, so it cannot be retrievable; set retrievable to false.", f.Name)
			}
			f.Retrievable = f.Stored
		}
		if err := checkVectorField(f); err != nil {
			return err
		}
		if err := checkAnalyzers(f, custom); err != nil {
			return err
		}
		ix.fields = append(ix.fields, f)
		ix.byName[f.Name] = f
	}
	if ix.key == nil {
		return badRequest("The request is invalid. Details: the index has no key field; mark exactly one Edm.String field with \"key\": true.")
	}
	return nil
}

func checkVectorField(f *field) *apiError {
	if !f.isVector() {
		if f.Dimensions != nil || f.Profile != "" {
			return badRequest("The request is invalid. Details: field '%s': dimensions and vectorSearchProfile apply only to vector fields (Collection(Edm.Single)).", f.Name)
		}
		if f.Type == "Edm.Single" {
			return badRequest("The request is invalid. Details: field '%s': Edm.Single is only valid as Collection(Edm.Single).", f.Name)
		}
		if f.isCollection() && f.Sortable != nil && *f.Sortable {
			return badRequest("The request is invalid. Details: field '%s' of type %s cannot be sortable; collections are not sortable.", f.Name, f.Type)
		}
		return nil
	}
	if f.Dimensions == nil || *f.Dimensions < azspec.MinVectorDimensions || *f.Dimensions > azspec.MaxVectorDimensions {
		return badRequest("The request is invalid. Details: vector field '%s' must set dimensions between %d and %d.", f.Name, azspec.MinVectorDimensions, azspec.MaxVectorDimensions)
	}
	if f.Profile == "" {
		return badRequest("The request is invalid. Details: vector field '%s' must set vectorSearchProfile.", f.Name)
	}
	if f.Searchable != nil && !*f.Searchable {
		return badRequest("The request is invalid. Details: vector field '%s' must be searchable.", f.Name)
	}
	for _, p := range []struct {
		name string
		v    *bool
	}{{"filterable", f.Filterable}, {"sortable", f.Sortable}, {"facetable", f.Facetable}} {
		if p.v != nil && *p.v {
			return badRequest("The request is invalid. Details: vector field '%s' cannot be %s.", f.Name, p.name)
		}
	}
	return nil
}

// checkAnalyzers checks the analyzer, searchAnalyzer and indexAnalyzer of
// a field: each must be a value of the LexicalAnalyzerName enum (exactly,
// e.g. en.lucene, not the SDKs' identifier EnLucene) or the name of one of
// the index's own analyzers, and only searchable string fields take one.
func checkAnalyzers(f *field, custom map[string]bool) *apiError {
	for _, a := range []struct{ prop, name string }{{"analyzer", f.Analyzer}, {"searchAnalyzer", f.SearchAnalyzer}, {"indexAnalyzer", f.IndexAnalyzer}} {
		if a.name == "" {
			continue
		}
		if !azspec.IsLexicalAnalyzer(a.name) && !custom[a.name] {
			return badRequest("The request is invalid. Details: definition : field '%s' names the %s '%s', which is neither a predefined analyzer (a LexicalAnalyzerName of api-version %s, such as en.lucene, standard.lucene or keyword) nor an analyzer defined in the index's analyzers.", f.Name, a.prop, a.name, APIVersion)
		}
		if !f.isStringField() || (f.Searchable != nil && !*f.Searchable) {
			return badRequest("The request is invalid. Details: definition : field '%s' sets %s '%s', but analyzers apply only to searchable fields of type Edm.String or Collection(Edm.String).", f.Name, a.prop, a.name)
		}
	}
	return nil
}

// resolveVectorProfiles checks profile → algorithm → compression references
// and records each vector field's metric.
func (ix *index) resolveVectorProfiles(def indexDef) *apiError {
	type algo struct{ kind, metric string }
	algos := map[string]algo{}
	profiles := map[string]string{}
	if vs := def.VectorSearch; vs != nil {
		comps := map[string]string{}
		for _, c := range vs.Compressions {
			comps[c.Name] = c.Kind
		}
		for _, a := range vs.Algorithms {
			m := ""
			switch {
			case a.Kind == "hnsw" && a.HNSW != nil:
				m = a.HNSW.Metric
			case a.Kind == "exhaustiveKnn" && a.KNN != nil:
				m = a.KNN.Metric
			case a.Kind != "hnsw" && a.Kind != "exhaustiveKnn":
				return badRequest("The request is invalid. Details: vectorSearch.algorithms '%s': unknown kind '%s'; use hnsw or exhaustiveKnn.", a.Name, a.Kind)
			}
			switch m {
			case "":
				m = "cosine"
			case "cosine", "euclidean", "dotProduct":
			case "hamming":
				return badRequest("The request is invalid. Details: vectorSearch.algorithms '%s': the hamming metric applies only to packed binary vector fields (Collection(Edm.Byte) with vectorEncoding packedBit), which this test server does not emulate; use cosine, euclidean or dotProduct.", a.Name)
			default:
				return badRequest("The request is invalid. Details: vectorSearch.algorithms '%s': unknown metric '%s'; use cosine, euclidean or dotProduct.", a.Name, m)
			}
			algos[a.Name] = algo{kind: a.Kind, metric: m}
		}
		for _, p := range vs.Profiles {
			a, ok := algos[p.Algorithm]
			if !ok {
				return badRequest("The request is invalid. Details: vector profile '%s' names the algorithm '%s', which is not in vectorSearch.algorithms.", p.Name, p.Algorithm)
			}
			if p.Compression != "" {
				if _, ok := comps[p.Compression]; !ok {
					return badRequest("The request is invalid. Details: vector profile '%s' names the compression '%s', which is not in vectorSearch.compressions.", p.Name, p.Compression)
				}
				if a.kind == "exhaustiveKnn" {
					return badRequest("The request is invalid. Details: vector profile '%s' combines compression '%s' with the exhaustiveKnn algorithm '%s'; in api-version %s compression (scalar or binary quantization) applies to hnsw algorithms only. Use an hnsw algorithm or remove the compression.", p.Name, p.Compression, p.Algorithm, APIVersion)
				}
			}
			profiles[p.Name] = p.Algorithm
		}
	}
	for _, f := range ix.fields {
		if !f.isVector() {
			continue
		}
		an, ok := profiles[f.Profile]
		if !ok {
			return badRequest("The request is invalid. Details: vector field '%s' names the vector profile '%s', which is not in vectorSearch.profiles.", f.Name, f.Profile)
		}
		f.metric = algos[an].metric
	}
	return nil
}

// fillDefaults sets the field attributes the service fills in when they are
// omitted, both on the parsed fields and on the stored definition.
func (ix *index) fillDefaults() {
	t, f := true, false
	set := func(p **bool, v bool) {
		if *p == nil {
			if v {
				*p = &t
			} else {
				*p = &f
			}
		}
	}
	rawFields, _ := ix.raw["fields"].([]any)
	for i, fl := range ix.fields {
		vec := fl.isVector()
		text := fl.isStringField()
		set(&fl.Key, false)
		set(&fl.Retrievable, true)
		set(&fl.Stored, true)
		set(&fl.Searchable, vec || text)
		set(&fl.Filterable, !vec)
		set(&fl.Sortable, !fl.isCollection())
		set(&fl.Facetable, !vec && fl.Type != "Edm.GeographyPoint")
		if i < len(rawFields) {
			if m, ok := rawFields[i].(map[string]any); ok {
				for k, v := range map[string]bool{"key": *fl.Key, "retrievable": *fl.Retrievable, "stored": *fl.Stored,
					"searchable": *fl.Searchable, "filterable": *fl.Filterable, "sortable": *fl.Sortable, "facetable": *fl.Facetable} {
					if m[k] == nil {
						m[k] = v
					}
				}
				// The service answers every attribute, null when unset.
				for _, k := range []string{"analyzer", "searchAnalyzer", "indexAnalyzer", "dimensions", "vectorSearchProfile"} {
					if _, ok := m[k]; !ok {
						m[k] = nil
					}
				}
				if m["synonymMaps"] == nil {
					m["synonymMaps"] = []any{}
				}
			}
		}
	}
	ix.raw["@odata.etag"] = `"0x1"`
}

func (s *Server) putIndex(w http.ResponseWriter, urlName string, body []byte, post bool) *apiError {
	if err := s.validateBody("SearchIndex", body); err != nil {
		return err
	}
	ix, err := parseIndex(body)
	if err != nil {
		return err
	}
	if !post && ix.name != urlName {
		return badRequest("The request is invalid. Details: the index name '%s' in the body differs from the name '%s' in the URL.", ix.name, urlName)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists := s.indexes[ix.name]
	if exists && post {
		return &apiError{status: http.StatusConflict, code: "ResourceNameAlreadyInUse",
			message: fmt.Sprintf("Cannot create index '%s' because it already exists.", ix.name)}
	}
	status := http.StatusCreated
	if exists {
		if err := compatible(old, ix); err != nil {
			return err
		}
		ix.docs = old.docs
		status = http.StatusOK
	}
	s.indexes[ix.name] = ix
	writeJSON(w, status, ix.raw)
	return nil
}

// compatible allows updating an index only by adding fields, as the service
// does for existing fields' types and attributes.
func compatible(old, nu *index) *apiError {
	for _, of := range old.fields {
		nf, ok := nu.byName[of.Name]
		if !ok {
			return badRequest("The request is invalid. Details: existing field '%s' cannot be removed from index '%s'; delete and re-create the index.", of.Name, old.name)
		}
		a, _ := json.Marshal(of)
		b, _ := json.Marshal(nf)
		if !bytes.Equal(a, b) {
			return badRequest("The request is invalid. Details: existing field '%s' cannot be changed in index '%s'; delete and re-create the index.", of.Name, old.name)
		}
	}
	return nil
}

func (s *Server) getIndex(w http.ResponseWriter, name string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return indexNotFound(name)
	}
	writeJSON(w, http.StatusOK, ix.raw)
	return nil
}

func (s *Server) deleteIndex(w http.ResponseWriter, name string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.indexes[name]; !ok {
		return indexNotFound(name)
	}
	delete(s.indexes, name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listIndexes(w http.ResponseWriter, r *http.Request) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.indexes))
	for n := range s.indexes {
		names = append(names, n)
	}
	slices.Sort(names)
	onlyNames := r.URL.Query().Get("$select") == "name"
	value := make([]any, 0, len(names))
	for _, n := range names {
		if onlyNames {
			value = append(value, map[string]any{"name": n})
		} else {
			value = append(value, s.indexes[n].raw)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": value})
	return nil
}

func (s *Server) stats(w http.ResponseWriter, name string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix, ok := s.indexes[name]
	if !ok {
		return indexNotFound(name)
	}
	var size, vecSize int
	for _, d := range ix.docs {
		b, _ := json.Marshal(d)
		size += len(b)
		for _, v := range d {
			if vec, ok := v.([]float32); ok {
				vecSize += 4 * len(vec)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"documentCount": len(ix.docs), "storageSize": size, "vectorIndexSize": vecSize})
	return nil
}

func (s *Server) count(w http.ResponseWriter, name string) *apiError {
	s.mu.Lock()
	ix, ok := s.indexes[name]
	n := 0
	if ok {
		n = len(ix.docs)
	}
	s.mu.Unlock()
	if !ok {
		return indexNotFound(name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("\ufeff" + strconv.Itoa(n)))
	return nil
}
