package cloudsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agnivade/levenshtein"
)

// Names of the vector search configurations created with the index; they
// are LlamaIndex's, so indexes created by either are alike.
const (
	hnswAlgorithmName = "myHnsw"
	knnAlgorithmName  = "myExhaustiveKnn"
	hnswProfileName   = "myHnswProfile"
	knnProfileName    = "myExhaustiveKnnProfile"
	compressionName   = "myCompression"
)

// IndexDefinition is the subset of the service's SearchIndex that Sluice
// writes and reads.
type IndexDefinition struct {
	Name         string         `json:"name"`                   // index name
	Fields       []Field        `json:"fields"`                 // top-level fields
	VectorSearch *VectorSearch  `json:"vectorSearch,omitempty"` // algorithms, profiles, compressions
	Semantic     *SemanticSetup `json:"semantic,omitempty"`     // semantic ranking configurations
}

// Field is an index field (SearchField). Nil attributes are left to the service's defaults.
type Field struct {
	Name                string `json:"name"`                          // field name
	Type                string `json:"type"`                          // Edm type, e.g. Collection(Edm.Single)
	Key                 bool   `json:"key,omitempty"`                 // whether it is the key field
	Retrievable         *bool  `json:"retrievable,omitempty"`         // returned by searches
	Searchable          *bool  `json:"searchable,omitempty"`          // full-text or vector searchable
	Filterable          *bool  `json:"filterable,omitempty"`          // usable in $filter
	Sortable            *bool  `json:"sortable,omitempty"`            // usable in $orderby
	Facetable           *bool  `json:"facetable,omitempty"`           // usable in facets
	Analyzer            string `json:"analyzer,omitempty"`            // lexical analyzer of a searchable string
	SearchAnalyzer      string `json:"searchAnalyzer,omitempty"`      // analyzer at query time, when set apart from indexing
	IndexAnalyzer       string `json:"indexAnalyzer,omitempty"`       // analyzer at indexing time, when set apart from queries
	Dimensions          int    `json:"dimensions,omitempty"`          // vector length of a vector field
	VectorSearchProfile string `json:"vectorSearchProfile,omitempty"` // profile of a vector field
}

// VectorSearch is the index's vector configuration.
type VectorSearch struct {
	Algorithms   []Algorithm         `json:"algorithms"`             // HNSW and exhaustive KNN
	Profiles     []Profile           `json:"profiles"`               // one per algorithm
	Compressions []CompressionConfig `json:"compressions,omitempty"` // the configured compression, if any
}

// Algorithm is a vector search algorithm configuration.
type Algorithm struct {
	Name       string          `json:"name"`                              // configuration name
	Kind       string          `json:"kind"`                              // hnsw or exhaustiveKnn
	HNSW       *HNSWParameters `json:"hnswParameters,omitempty"`          // for kind hnsw
	Exhaustive *KNNParameters  `json:"exhaustiveKnnParameters,omitempty"` // for kind exhaustiveKnn
}

// HNSWParameters are the HNSW graph parameters.
type HNSWParameters struct {
	M              int    `json:"m"`              // links per node (4 to 10)
	EfConstruction int    `json:"efConstruction"` // candidate list size while indexing
	EfSearch       int    `json:"efSearch"`       // candidate list size while searching
	Metric         string `json:"metric"`         // similarity metric, e.g. cosine
}

// KNNParameters are the exhaustive KNN parameters.
type KNNParameters struct {
	Metric string `json:"metric"` // similarity metric, e.g. cosine
}

// Profile names an algorithm (and optionally a compression) for vector fields.
type Profile struct {
	Name        string `json:"name"`                  // profile name
	Algorithm   string `json:"algorithm"`             // algorithm configuration name
	Compression string `json:"compression,omitempty"` // compression configuration name, if any
}

// CompressionConfig is a vector compression configuration.
type CompressionConfig struct {
	Name                      string        `json:"name"`                                   // configuration name
	Kind                      string        `json:"kind"`                                   // scalarQuantization or binaryQuantization
	RerankWithOriginalVectors bool          `json:"rerankWithOriginalVectors"`              // rescore with full vectors
	DefaultOversampling       float64       `json:"defaultOversampling,omitempty"`          // candidates fetched per result
	ScalarParameters          *ScalarParams `json:"scalarQuantizationParameters,omitempty"` // for scalarQuantization
}

// ScalarParams are the scalar quantization parameters.
type ScalarParams struct {
	QuantizedDataType string `json:"quantizedDataType"` // int8
}

// SemanticSetup holds the semantic configurations.
type SemanticSetup struct {
	Configurations []SemanticConfig `json:"configurations"` // named configurations
}

// SemanticConfig is one semantic configuration.
type SemanticConfig struct {
	Name              string            `json:"name"`              // configuration name
	PrioritizedFields PrioritizedFields `json:"prioritizedFields"` // fields semantic ranking reads
}

// PrioritizedFields lists the fields semantic ranking reads.
type PrioritizedFields struct {
	ContentFields []SemanticField `json:"prioritizedContentFields"` // content fields, most important first
}

// SemanticField names a field.
type SemanticField struct {
	FieldName string `json:"fieldName"` // an index field
}

func ptr[T any](v T) *T { return &v }

// Definition returns the index CreateIndex creates: the key, the chunk
// with the language analyzer, the vector field with the profile of the
// configured algorithm, the metadata string, the filterable doc_id, one
// field per filterable metadata key, hidden fields not retrievable, HNSW
// and exhaustive KNN configurations, the compression attached to the
// profile in use, and a semantic configuration with the chunk as content
// (none when hiddenFieldKeys hides the chunk: the service ranks only
// searchable, retrievable fields; see CheckQuery).
//
// The vector field is retrievable unless hiddenFieldKeys hides it, as
// LlamaIndex.TS creates it, so that a run can write a chunk whose text a
// node it committed holds with that node's vector (see NodeVectors);
// searches never return it, as they select their fields.
//
// The chunk is the only full-text searchable field: every other field is
// created with searchable false, as LlamaIndex creates them, because the
// service makes string fields searchable by default and text queries would
// then match ids, document ids and metadata values.
//
// Only the key is sortable (documents are read in key order) and no field
// is facetable: every other field is created with sortable and facetable
// false, as LlamaIndex creates them. The service makes single-valued simple
// fields sortable and facetable by default, and a sortable, facetable or
// filterable string is indexed as one term, which it rejects above 32,766
// UTF-8 bytes ("contains a term that is too large to process"): with the
// defaults a long chunk or metadata string could not be stored. Filterable
// fields (the key, doc_id and the filterable metadata fields) keep that
// limit; their values are ids and short metadata values.
func (c Config) Definition() IndexDefinition {
	c = c.normalize()
	hidden := c.hidden()
	retrievable := func(name string) *bool { return ptr(!hidden[name]) }
	profile := knnProfileName
	if c.VectorAlgorithmType == HNSW {
		profile = hnswProfileName
	}
	no := func() *bool { return ptr(false) } // a pointer of its own per attribute, so callers may edit one
	chunk := Field{Name: c.ChunkFieldKey, Type: "Edm.String", Searchable: ptr(true), Filterable: no(), Sortable: no(), Facetable: no(), Retrievable: retrievable(c.ChunkFieldKey), Analyzer: c.LanguageAnalyzer}
	fields := []Field{
		{Name: c.IDFieldKey, Type: "Edm.String", Key: true, Searchable: no(), Filterable: ptr(true), Sortable: ptr(true), Facetable: no(), Retrievable: ptr(true)},
		chunk,
		// A vector field can be neither filterable, sortable nor facetable.
		{Name: c.EmbeddingFieldKey, Type: "Collection(Edm.Single)", Searchable: ptr(true), Filterable: no(), Sortable: no(), Facetable: no(), Retrievable: retrievable(c.EmbeddingFieldKey), Dimensions: c.EmbeddingDimensionality, VectorSearchProfile: profile},
		{Name: c.MetadataStringFieldKey, Type: "Edm.String", Searchable: no(), Filterable: no(), Sortable: no(), Facetable: no(), Retrievable: retrievable(c.MetadataStringFieldKey)},
		{Name: c.DocIDFieldKey, Type: "Edm.String", Searchable: no(), Filterable: ptr(true), Sortable: no(), Facetable: no(), Retrievable: retrievable(c.DocIDFieldKey)},
	}
	for _, ff := range c.FilterableMetadataFieldKeys {
		fields = append(fields, Field{Name: ff.Field, Type: string(ff.Type), Searchable: no(), Filterable: ptr(true), Sortable: no(), Facetable: no(), Retrievable: retrievable(ff.Field)})
	}
	for _, h := range c.HiddenFieldKeys {
		if !hasField(fields, h) {
			fields = append(fields, Field{Name: h, Type: "Edm.String", Searchable: no(), Retrievable: no(), Filterable: ptr(true), Sortable: no(), Facetable: no()})
		}
	}
	vs := &VectorSearch{
		Algorithms: []Algorithm{
			{Name: hnswAlgorithmName, Kind: string(HNSW), HNSW: &HNSWParameters{M: 4, EfConstruction: 400, EfSearch: 500, Metric: "cosine"}},
			{Name: knnAlgorithmName, Kind: string(ExhaustiveKNN), Exhaustive: &KNNParameters{Metric: "cosine"}},
		},
		Profiles: []Profile{
			{Name: hnswProfileName, Algorithm: hnswAlgorithmName},
			{Name: knnProfileName, Algorithm: knnAlgorithmName},
		},
	}
	if c.CompressionType != NoCompression {
		cc := CompressionConfig{Name: compressionName, Kind: string(c.CompressionType), RerankWithOriginalVectors: true, DefaultOversampling: 10}
		if c.CompressionType == ScalarQuantization {
			cc.ScalarParameters = &ScalarParams{QuantizedDataType: "int8"}
		}
		vs.Compressions = []CompressionConfig{cc}
		for i := range vs.Profiles {
			if vs.Profiles[i].Name == profile {
				vs.Profiles[i].Compression = compressionName
			}
		}
	}
	def := IndexDefinition{Name: c.IndexName, Fields: fields, VectorSearch: vs}
	if !hidden[c.ChunkFieldKey] {
		def.Semantic = &SemanticSetup{Configurations: []SemanticConfig{{
			Name:              c.SemanticConfiguration,
			PrioritizedFields: PrioritizedFields{ContentFields: []SemanticField{{FieldName: c.ChunkFieldKey}}},
		}}}
	}
	return def
}

func hasField(fields []Field, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// manageIndex applies cfg.IndexManagement.
func (s *Store) manageIndex(ctx context.Context) error {
	switch s.cfg.IndexManagement {
	case ValidateIndex:
		return s.ValidateIndex(ctx)
	case CreateIfNotExists:
		err := s.ValidateIndex(ctx)
		if errors.Is(err, ErrIndexNotFound) {
			err = s.CreateIndex(ctx)
			if statusOf(err) == http.StatusConflict { // created meanwhile by another process
				err = s.ValidateIndex(ctx)
			}
		}
		return err
	}
	return nil
}

// CreateIndex creates the index of Config.Definition. It fails with a
// *ServiceError (409) if the index exists.
//
// Index creation is a POST, which the pipeline retries after a 5xx answer
// or a timeout like any request, although the service may have created the
// index before that answer: the retry is then answered 409. So a 409 to a
// retried request is checked: CreateIndex fetches the index and succeeds
// if it validates against the configuration (see ValidateIndex); if it
// does not, the error wraps both the 409 *ServiceError and the validation
// error (a *MismatchError, say).
func (s *Store) CreateIndex(ctx context.Context) error {
	body, err := marshal("create index", s.cfg.Definition())
	if err != nil {
		return err
	}
	var attempts atomic.Int32
	_, _, err = s.do(ctx, call{op: "create index " + s.cfg.IndexName, method: http.MethodPost, path: "/indexes", body: body, attempts: &attempts})
	if err == nil {
		s.keys.set(true) // Definition's key is sortable
		s.vectors.set(s.cfg.vectorsReadableIn(s.cfg.Definition()))
	}
	if statusOf(err) != http.StatusConflict || attempts.Load() < 2 {
		return err
	}
	if verr := s.ValidateIndex(ctx); verr != nil {
		return fmt.Errorf("%w; the request was retried, so an earlier attempt may have created the index, but the index found does not validate: %w", err, verr)
	}
	return nil // an earlier attempt created it
}

// DeleteIndex deletes the index and every document in it. Deleting an
// absent index is not an error.
func (s *Store) DeleteIndex(ctx context.Context) error {
	_, _, err := s.do(ctx, call{op: "delete index", method: http.MethodDelete, path: s.indexPath(""), index: true})
	if errors.Is(err, ErrIndexNotFound) {
		err = nil
	}
	if err == nil {
		s.keys.reset() // an index created later under the name may differ
		s.vectors.reset()
	}
	return err
}

// GetIndex returns the remote index definition; a missing index is an error
// wrapping ErrIndexNotFound.
func (s *Store) GetIndex(ctx context.Context) (IndexDefinition, error) {
	var def IndexDefinition
	err := s.doJSON(ctx, call{op: "get index", method: http.MethodGet, path: s.indexPath(""), index: true}, &def)
	return def, err
}

// ValidateIndex checks that the index exists and that it matches the
// configuration: the key field, the vector field and its dimensions, the
// vector algorithm and compression of the vector field's profile, the
// other configured fields, the chunk field's analyzer (when
// languageAnalyzer is set) and each filterable metadata field's type. A
// mismatch is a *MismatchError naming the setting.
//
// A key field that is not sortable is accepted: LlamaIndex's Python store
// creates its key so (SimpleField's sortable defaults to false). Documents
// of such an index are read with skip instead of in key order, which
// reaches 101,000 documents per read at most (see ScanLimitError); the
// store learns which way to read from the definition ValidateIndex
// fetched.
func (s *Store) ValidateIndex(ctx context.Context) error {
	def, err := s.GetIndex(ctx)
	if err != nil {
		return err
	}
	return s.validate(def)
}

// validate is ValidateIndex of the definition def, already fetched.
func (s *Store) validate(def IndexDefinition) error {
	if err := s.cfg.checkDefinition(def); err != nil {
		return err
	}
	s.keys.set(keyFieldSortable(def, s.cfg.IDFieldKey))
	s.vectors.set(s.cfg.vectorsReadableIn(def))
	return nil
}

// keyFieldSortable reports whether def's field key, the key field, can be
// used in $orderby. A sortable attribute left out is the service's
// default, sortable for a single-valued string. A definition without the
// field is taken as sortable: reads then fail naming the field, as with
// any misnamed key.
func keyFieldSortable(def IndexDefinition, key string) bool {
	for _, f := range def.Fields {
		if f.Name == key {
			return f.Sortable == nil || *f.Sortable
		}
	}
	return true
}

// keyOrder records whether the index's key field is sortable, which
// decides how documents are read (see Store.scan). ValidateIndex and
// CreateIndex set it from the definition they fetched or created;
// otherwise (indexManagement NoValidation) the first read fetches the
// definition, once. It is safe for concurrent use.
type keyOrder struct {
	state atomic.Int32  // keyUnknown, keySortable or keyUnsortable
	fetch chan struct{} // held by the one caller learning the state
}

// States of a keyOrder.
const (
	keyUnknown int32 = iota
	keySortable
	keyUnsortable
)

func newKeyOrder() *keyOrder { return &keyOrder{fetch: make(chan struct{}, 1)} }

func (k *keyOrder) set(sortable bool) {
	if sortable {
		k.state.Store(keySortable)
	} else {
		k.state.Store(keyUnsortable)
	}
}

func (k *keyOrder) reset() { k.state.Store(keyUnknown) }

// keySortable reports whether the index's key field is sortable. Unless
// ValidateIndex or CreateIndex told the store, it reads the index
// definition, once: concurrent callers wait for that read, and a failed
// read is tried again by the next caller. An identity that may query
// documents but not read index definitions (the Search Index Data Reader
// or Contributor role without Search Service Contributor) is answered 403;
// the store then asks the service with searches for no documents, one
// ordered by the key, which is refused if the key is not sortable.
func (s *Store) keySortable(ctx context.Context) (bool, error) {
	if st := s.keys.state.Load(); st != keyUnknown {
		return st == keySortable, nil
	}
	select {
	case s.keys.fetch <- struct{}{}:
		defer func() { <-s.keys.fetch }()
	case <-ctx.Done():
		return false, fmt.Errorf("cloudsearch: get index: %w", ctx.Err())
	}
	if st := s.keys.state.Load(); st != keyUnknown { // learnt while this caller waited
		return st == keySortable, nil
	}
	def, err := s.GetIndex(ctx)
	if statusOf(err) == http.StatusForbidden {
		return s.probeKeyOrder(ctx)
	}
	if err != nil {
		return false, err
	}
	sortable := keyFieldSortable(def, s.cfg.IDFieldKey)
	s.keys.set(sortable)
	return sortable, nil
}

// probeKeyOrder learns whether the key field is sortable from searches
// for no documents: ordered by the key, the service refuses it (400) if
// the key is not sortable; unordered, it must then succeed.
func (s *Store) probeKeyOrder(ctx context.Context) (bool, error) {
	const op = "check whether the key field is sortable"
	_, err := s.search(ctx, op, searchRequest{Search: "*", OrderBy: s.cfg.IDFieldKey + " asc"})
	if err == nil {
		s.keys.set(true)
		return true, nil
	}
	if statusOf(err) != http.StatusBadRequest {
		return false, err
	}
	if _, err := s.search(ctx, op, searchRequest{Search: "*"}); err != nil {
		return false, err
	}
	s.keys.set(false)
	return false, nil
}

// mismatch reports the setting key (without the sink.cloudsearch. prefix)
// of c that the index does not match.
func (c *Config) mismatch(key, want, got, hint string) error {
	return &MismatchError{Index: c.IndexName, Setting: settingPrefix + key, Want: want, Got: got, Hint: hint}
}

func (c *Config) checkDefinition(def IndexDefinition) error {
	byName := map[string]Field{}
	key := ""
	for _, f := range def.Fields {
		byName[f.Name] = f
		if f.Key {
			key = f.Name
		}
	}
	if key != c.IDFieldKey {
		return c.mismatch("idFieldKey", strconv.Quote(c.IDFieldKey), "key field "+strconv.Quote(key), "set idFieldKey to "+strconv.Quote(key)+" or use another index")
	}
	emb, ok := byName[c.EmbeddingFieldKey]
	if !ok || emb.Type != "Collection(Edm.Single)" {
		return c.mismatch("embeddingFieldKey", "vector field "+strconv.Quote(c.EmbeddingFieldKey), "no such Collection(Edm.Single) field (fields: "+fieldNames(def.Fields)+")",
			"set embeddingFieldKey to the index's vector field")
	}
	if emb.Dimensions != c.EmbeddingDimensionality {
		return c.mismatch("embeddingDimensionality", strconv.Itoa(c.EmbeddingDimensionality)+" dimensions", strconv.Itoa(emb.Dimensions)+" dimensions",
			fmt.Sprintf("set embeddingDimensionality to the embedding model's output size; if the model really makes %d-dimensional vectors, delete and recreate the index (`sluice index delete`, then `sluice index create`, %s)", c.EmbeddingDimensionality, withConfig))
	}
	if err := c.checkVectorSetup(def, emb); err != nil {
		return err
	}
	for _, f := range []struct{ key, name string }{{"chunkFieldKey", c.ChunkFieldKey}, {"metadataStringFieldKey", c.MetadataStringFieldKey}, {"docIdFieldKey", c.DocIDFieldKey}} {
		if _, ok := byName[f.name]; !ok {
			return c.mismatch(f.key, "field "+strconv.Quote(f.name), "no such field (fields: "+fieldNames(def.Fields)+")", "set "+f.key+" to the index's field")
		}
	}
	// Reads by id filter on the key, deletes of a document on doc_id.
	for _, f := range []struct{ key, name, use string }{{"idFieldKey", c.IDFieldKey, "nodes are read by id"}, {"docIdFieldKey", c.DocIDFieldKey, "a document's nodes are found and deleted by it"}} {
		if fl := byName[f.name]; fl.Filterable != nil && !*fl.Filterable {
			return c.mismatch(f.key, "filterable field "+strconv.Quote(f.name), "not filterable",
				fmt.Sprintf("%s, so it must be filterable: use an index whose field is, or delete and recreate the index (%s)", f.use, recreateSteps))
		}
	}
	if err := c.checkAnalyzer(byName[c.ChunkFieldKey]); err != nil {
		return err
	}
	if err := c.checkRetrievable(byName); err != nil {
		return err
	}
	for _, ff := range c.FilterableMetadataFieldKeys {
		f, ok := byName[ff.Field]
		if !ok || (f.Filterable != nil && !*f.Filterable) {
			return c.mismatch("filterableMetadataFieldKeys."+ff.Key, "filterable field "+strconv.Quote(ff.Field), "no such filterable field",
				"remove the key from filterableMetadataFieldKeys, or recreate the index so it has the field")
		}
		if f.Type != string(ff.Type) {
			return c.mismatch("filterableMetadataFieldKeys."+ff.Key, fmt.Sprintf("field %q of type %s", ff.Field, ff.Type), "type "+f.Type,
				fmt.Sprintf("set the type to the index's, e.g. filterableMetadataFieldKeys: {%s: [%s, %s]}, or delete and recreate the index (%s)", ff.Key, ff.Field, f.Type, recreateSteps))
		}
	}
	return nil
}

// checkRetrievable checks that the fields the store reads back (see
// selectFields) are retrievable, unless hiddenFieldKeys hides them: the
// service refuses a search that selects a field it does not return.
func (c *Config) checkRetrievable(byName map[string]Field) error {
	hidden := c.hidden()
	for _, name := range c.readFields() {
		f := byName[name]
		if hidden[name] || f.Retrievable == nil || *f.Retrievable {
			continue
		}
		if name == c.IDFieldKey {
			return c.mismatch("idFieldKey", "retrievable key field "+strconv.Quote(name), "not retrievable",
				"use an index whose key field is retrievable")
		}
		return c.mismatch("hiddenFieldKeys", "field "+strconv.Quote(name)+" retrievable", "not retrievable (hidden from results)",
			fmt.Sprintf("add %s to hiddenFieldKeys, as the index was created (reads then leave it out), or delete and recreate the index (%s)", name, recreateSteps))
	}
	return nil
}

// hidden returns the set of hiddenFieldKeys.
func (c Config) hidden() map[string]bool {
	set := make(map[string]bool, len(c.HiddenFieldKeys))
	for _, h := range c.HiddenFieldKeys {
		set[h] = true
	}
	return set
}

// writtenFields lists the fields Sluice writes: the key, the chunk, the
// embedding, the metadata string, doc_id and the filterable metadata
// fields.
func (c Config) writtenFields() []string {
	names := []string{c.IDFieldKey, c.ChunkFieldKey, c.EmbeddingFieldKey, c.MetadataStringFieldKey, c.DocIDFieldKey}
	for _, f := range c.FilterableMetadataFieldKeys {
		names = append(names, f.Field)
	}
	return names
}

// strayKey is a hiddenFieldKeys entry that names no field Sluice writes,
// and the written field within two edits of it, if any.
type strayKey struct{ key, near string }

// strayHidden returns the hiddenFieldKeys that name none of writtenFields,
// in their order, each with the written field within two edits of it (most
// likely the one meant). The index gets such a key as a hidden string
// field that nothing fills.
func (c Config) strayHidden() []strayKey {
	names := c.writtenFields()
	var stray []strayKey
	for _, h := range c.HiddenFieldKeys {
		if slices.Contains(names, h) {
			continue
		}
		s, best := strayKey{key: h}, 3
		for _, n := range names {
			if d := levenshtein.ComputeDistance(strings.ToLower(h), strings.ToLower(n)); d < best {
				s.near, best = n, d
			}
		}
		stray = append(stray, s)
	}
	return stray
}

// readFields lists the fields the store reads back, unless hidden: the
// key, the chunk, the metadata string and doc_id.
func (c Config) readFields() []string {
	return []string{c.IDFieldKey, c.ChunkFieldKey, c.MetadataStringFieldKey, c.DocIDFieldKey}
}

// recreateSteps says how to rebuild an index whose settings cannot change.
const recreateSteps = "`sluice index delete`, then `sluice index create`, " + withConfig + "; the documents must be loaded again"

// withConfig follows the sluice commands a hint names: run without the
// failed command's --config, they would act on another configuration
// (./sluice.yaml or the default) and, say, create the index again with
// the settings it was refused for.
const withConfig = "with this command's --config if it has one"

// checkVectorSetup compares the algorithm kind and the compression behind
// the vector field's profile with vectorAlgorithmType and compressionType.
func (c *Config) checkVectorSetup(def IndexDefinition, emb Field) error {
	prof, alg := vectorProfile(def, emb.VectorSearchProfile)
	if alg == nil {
		return c.mismatch("vectorAlgorithmType", string(c.VectorAlgorithmType), fmt.Sprintf("no algorithm behind the vector profile %q of field %q", emb.VectorSearchProfile, emb.Name),
			"delete and recreate the index ("+recreateSteps+")")
	}
	if kind, err := ParseVectorAlgorithm(alg.Kind); err != nil || kind != c.VectorAlgorithmType {
		return c.mismatch("vectorAlgorithmType", string(c.VectorAlgorithmType), fmt.Sprintf("%s (algorithm %q of vector profile %q)", alg.Kind, alg.Name, prof.Name),
			fmt.Sprintf("set vectorAlgorithmType to %s, what the index uses, or delete and recreate the index with %s (%s)", alg.Kind, c.VectorAlgorithmType, recreateSteps))
	}
	got, known, gotDesc := profileCompression(def, prof)
	if known && got == c.CompressionType {
		return nil
	}
	want := string(c.CompressionType)
	if c.CompressionType == NoCompression {
		want = "no compression"
	}
	hint := "delete and recreate the index with the compression you want (" + recreateSteps + ")"
	switch {
	case known && got == NoCompression:
		hint = "leave compressionType empty, as the index has none, or " + hint
	case known:
		hint = "set compressionType to " + string(got) + ", what the index has, or " + hint
	}
	return c.mismatch("compressionType", want, gotDesc, hint)
}

// vectorProfile returns the named vector profile of def and its algorithm
// configuration; either is nil when def does not define it.
func vectorProfile(def IndexDefinition, name string) (*Profile, *Algorithm) {
	if def.VectorSearch == nil {
		return nil, nil
	}
	vs := def.VectorSearch
	for i := range vs.Profiles {
		if vs.Profiles[i].Name != name {
			continue
		}
		for j := range vs.Algorithms {
			if vs.Algorithms[j].Name == vs.Profiles[i].Algorithm {
				return &vs.Profiles[i], &vs.Algorithms[j]
			}
		}
		return &vs.Profiles[i], nil
	}
	return nil, nil
}

// profileCompression returns the compression kind attached to prof, whether
// it is one Sluice knows (none included), and a description for messages.
func profileCompression(def IndexDefinition, prof *Profile) (Compression, bool, string) {
	if prof.Compression == "" {
		return NoCompression, true, "no compression"
	}
	for _, cc := range def.VectorSearch.Compressions {
		if cc.Name == prof.Compression {
			kind, err := ParseCompression(cc.Kind)
			return kind, err == nil && kind != NoCompression, fmt.Sprintf("%s (compression %q of vector profile %q)", cc.Kind, cc.Name, prof.Name)
		}
	}
	return NoCompression, false, fmt.Sprintf("compression %q, which the index does not define", prof.Compression)
}

// checkAnalyzer compares the chunk field's analyzer with languageAnalyzer.
// An unset languageAnalyzer accepts any analyzer; a field without one
// uses the service's standard.lucene.
func (c *Config) checkAnalyzer(chunk Field) error {
	if c.LanguageAnalyzer == "" {
		return nil
	}
	const standard = "standard.lucene"
	got, gotDesc := chunk.Analyzer, "analyzer "+chunk.Analyzer
	switch {
	case got == "" && (chunk.SearchAnalyzer != "" || chunk.IndexAnalyzer != ""):
		gotDesc = fmt.Sprintf("indexAnalyzer %q and searchAnalyzer %q", chunk.IndexAnalyzer, chunk.SearchAnalyzer)
	case got == "":
		got, gotDesc = standard, "no analyzer (the service's standard.lucene)"
	}
	if got == c.LanguageAnalyzer {
		return nil
	}
	set := "set languageAnalyzer to " + chunk.Analyzer
	if chunk.Analyzer == "" || chunk.Analyzer == standard {
		set = "leave languageAnalyzer empty"
	}
	return c.mismatch("languageAnalyzer", c.LanguageAnalyzer+" on field "+strconv.Quote(chunk.Name), gotDesc,
		fmt.Sprintf("%s to use the index's analyzer, or delete and recreate the index with %s (the analyzer of an existing field cannot change: %s)", set, c.LanguageAnalyzer, recreateSteps))
}

func fieldNames(fields []Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Dimensions returns the dimensions of the remote index's vector field
// (Config.EmbeddingFieldKey), for `sluice doctor`.
func (s *Store) Dimensions(ctx context.Context) (int, error) {
	def, err := s.GetIndex(ctx)
	if err != nil {
		return 0, err
	}
	return s.dimensionsOf(def)
}

// dimensionsOf is Dimensions of the definition def, already fetched.
func (s *Store) dimensionsOf(def IndexDefinition) (int, error) {
	for _, f := range def.Fields {
		if f.Name == s.cfg.EmbeddingFieldKey {
			return f.Dimensions, nil
		}
	}
	return 0, s.cfg.mismatch("embeddingFieldKey", strconv.Quote(s.cfg.EmbeddingFieldKey), "no such field (fields: "+fieldNames(def.Fields)+")", "set embeddingFieldKey to the index's vector field")
}

// IndexStats are the statistics of the index. The service collects them
// periodically, so they may lag behind recent writes.
type IndexStats struct {
	DocumentCount   int64 `json:"documentCount"`
	StorageSize     int64 `json:"storageSize"`     // bytes
	VectorIndexSize int64 `json:"vectorIndexSize"` // bytes
}

// Stats returns the index's document count, storage size and vector index
// size.
func (s *Store) Stats(ctx context.Context) (IndexStats, error) {
	var st IndexStats
	err := s.doJSON(ctx, call{op: "index stats", method: http.MethodGet, path: s.indexPath("/stats"), index: true}, &st)
	return st, err
}

// Count returns the number of documents in the index ($count).
func (s *Store) Count(ctx context.Context) (int, error) {
	sent := &sentCredentials{}
	_, body, err := s.do(ctx, call{op: "count documents", method: http.MethodGet, path: s.indexPath("/docs/$count"), index: true, accept: "text/plain", sent: sent})
	if err != nil {
		return 0, err
	}
	return parseCount([]byte(sent.redact(string(body)))) // its error quotes the answer
}

// Empty reports whether the index holds no document ($count is 0). An
// incremental run asks once at its start (pipeline.EmptyReporter): into an
// empty index, a document the manifest does not know cannot have earlier
// nodes, so the run spares it a search for them.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	n, err := s.Count(ctx)
	return n == 0, err
}

// countSettle is how long the service takes, at most in practice, to count
// a document it acknowledged: indexing is near real time (about a second).
const countSettle = 3 * time.Second

// Settle returns how long a document the service acknowledged may take to
// be counted by Count. It makes Store a pipeline.SettlingCounter: a run
// that finds the index empty although its manifest records documents in it
// asks again after this long before it writes every document again.
func (s *Store) Settle() time.Duration { return countSettle }

// parseCount reads the text answer of $count, which starts with a UTF-8
// byte-order mark.
func parseCount(body []byte) (int, error) {
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	n, err := strconv.Atoi(strings.TrimSpace(string(body)))
	if err != nil {
		return 0, fmt.Errorf("cloudsearch: count documents: answer %q is not a number: %w", truncate(string(body), 40), err)
	}
	return n, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ListIndexes returns the names of the service's indexes. `sluice doctor`
// uses it to check the endpoint and the credentials, as the seed advises.
func (s *Store) ListIndexes(ctx context.Context) ([]string, error) {
	var res struct {
		Value []struct {
			Name string `json:"name"`
		} `json:"value"`
	}
	q := url.Values{"$select": {"name"}}
	if err := s.doJSON(ctx, call{op: "list indexes", method: http.MethodGet, path: "/indexes", query: q}, &res); err != nil {
		return nil, err
	}
	names := make([]string, len(res.Value))
	for i, v := range res.Value {
		names[i] = v.Name
	}
	return names, nil
}

// Check is the outcome of one `sluice doctor` check.
type Check struct {
	Name   string // what was checked
	OK     bool
	Detail string // what was found, or how to fix it
	Err    error  // the failure, classifiable with errors.Is
}

// Doctor checks the endpoint and credentials by listing indexes, then that
// the index exists, then that its dimensions equal embedderDims (skipped
// when embedderDims is 0) and the configuration's. It stops at the first
// failed check.
//
// An index that does not exist is a failed check (wrapping
// ErrIndexNotFound), unless indexManagement is CreateIfNotExists: the
// first run creates it then, as a local store is created by the first
// run, so the check passes with a note saying so, and embedderDims (when
// not 0) is compared with embeddingDimensionality, the dimensions the
// index will be created with.
func (s *Store) Doctor(ctx context.Context, embedderDims int) []Check {
	var checks []Check
	names, err := s.ListIndexes(ctx)
	if err != nil {
		return append(checks, Check{Name: "endpoint and credentials", Detail: err.Error(), Err: err})
	}
	checks = append(checks, Check{Name: "endpoint and credentials", OK: true, Detail: fmt.Sprintf("%s answers; %d indexes listed", s.cfg.Endpoint, len(names))})
	def, err := s.GetIndex(ctx)
	if errors.Is(err, ErrIndexNotFound) && s.cfg.IndexManagement == CreateIfNotExists {
		return append(checks, s.indexToBeCreated(embedderDims)...)
	}
	dims := 0
	if err == nil {
		dims, err = s.dimensionsOf(def)
	}
	if err != nil {
		return append(checks, Check{Name: "index " + s.cfg.IndexName, Detail: err.Error(), Err: err})
	}
	detail := fmt.Sprintf("exists; vector field %s has %d dimensions", s.cfg.EmbeddingFieldKey, dims)
	if !s.cfg.vectorsReadableIn(def) {
		detail += fmt.Sprintf("; the index does not return it or the chunk (not retrievable, or in hiddenFieldKeys), so chunks of copied and renamed documents are embedded again (to read vectors back: %s)", recreateSteps)
	}
	checks = append(checks, Check{Name: "index " + s.cfg.IndexName, OK: true, Detail: detail})
	if dims != s.cfg.EmbeddingDimensionality {
		err := s.cfg.mismatch("embeddingDimensionality", strconv.Itoa(s.cfg.EmbeddingDimensionality)+" dimensions", strconv.Itoa(dims)+" dimensions",
			"set embeddingDimensionality to the embedding model's output size")
		return append(checks, Check{Name: "configured dimensions", Detail: err.Error(), Err: err})
	}
	if embedderDims > 0 && embedderDims != dims {
		err := s.cfg.mismatch("embeddingDimensionality", strconv.Itoa(embedderDims)+" dimensions (the embedder's)", strconv.Itoa(dims)+" dimensions",
			"use an embedding model with "+strconv.Itoa(dims)+" dimensions, or recreate the index with embeddingDimensionality "+strconv.Itoa(embedderDims))
		return append(checks, Check{Name: "embedder dimensions", Detail: err.Error(), Err: err})
	}
	if embedderDims > 0 {
		checks = append(checks, Check{Name: "embedder dimensions", OK: true, Detail: fmt.Sprintf("embedder and index agree on %d dimensions", dims)})
	}
	// As a run checks it: not at all with NoValidation.
	if s.cfg.IndexManagement == NoValidation {
		return append(checks, Check{Name: "index definition", OK: true,
			Detail: "not compared with the settings (" + settingPrefix + "indexManagement is NoValidation); `sluice index validate` compares it"})
	}
	if err := s.validate(def); err != nil {
		return append(checks, Check{Name: "index definition", Detail: err.Error(), Err: err})
	}
	return append(checks, Check{Name: "index definition", OK: true, Detail: "matches the " + strings.TrimSuffix(settingPrefix, ".") + " settings"})
}

// indexToBeCreated are the checks of Doctor for an index that does not
// exist yet and that the first run creates (CreateIfNotExists): a note
// that it will be created, and the embedder's dimensions compared with
// those it will be created with.
func (s *Store) indexToBeCreated(embedderDims int) []Check {
	checks := []Check{{Name: "index " + s.cfg.IndexName, OK: true,
		Detail: "does not exist yet: the first `sluice run` creates it (" + settingPrefix + "indexManagement is CreateIfNotExists)"}}
	want := s.cfg.EmbeddingDimensionality
	switch {
	case embedderDims == 0:
	case embedderDims != want:
		err := configErr("embeddingDimensionality", fmt.Sprintf("is %d, the dimensions the first run creates the index with, but the embedder returns %d-dimensional vectors, which the index would refuse", want, embedderDims),
			fmt.Sprintf("set embeddingDimensionality to the embedding model's output size (%d)", embedderDims))
		checks = append(checks, Check{Name: "embedder dimensions", Detail: err.Error(), Err: err})
	default:
		checks = append(checks, Check{Name: "embedder dimensions", OK: true,
			Detail: fmt.Sprintf("the first run creates the index with embeddingDimensionality %d, the embedder's dimensions", want)})
	}
	return checks
}
