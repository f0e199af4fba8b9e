package cloudsearch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/internal/azcred"
	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
)

// Environment variables read by New.
const (
	// EnvEndpoint is the default variable holding the service endpoint.
	EnvEndpoint = "CLOUD_AI_SEARCH_ENDPOINT"
	// EnvKey is the default variable holding the admin key.
	EnvKey = "CLOUD_AI_SEARCH_KEY"
	// EnvAPIVersion holds the REST API version, e.g. 2024-09-01-preview.
	EnvAPIVersion = "CLOUD_SEARCH_API_VERSION"
	// EnvManagedIdentityClientID is the default variable holding the client
	// id of a user-assigned managed identity.
	EnvManagedIdentityClientID = "AZURE_CLIENT_ID"
)

// DefaultAPIVersion is the stable REST API version used when neither
// Config.APIVersion nor CLOUD_SEARCH_API_VERSION is set.
const DefaultAPIVersion = "2024-07-01"

// Limits of one docs/index request, as the service documents them.
const (
	// MaxBatchActions is the most actions one upload request may carry.
	MaxBatchActions = 1000
	// MaxBatchBytes is the most bytes one upload request body may have.
	MaxBatchBytes = 16 << 20
)

// Retry counts of Config.MaxRetries.
const (
	// DefaultMaxRetries is what a zero Config.MaxRetries means.
	DefaultMaxRetries = 5
	// NoRetries is the Config.MaxRetries that turns retries off: every
	// request and document is sent once.
	NoRetries = -1
	// MaxRetriesLimit is the largest Config.MaxRetries accepted.
	MaxRetriesLimit = 20
)

// retries returns how often a request or document is retried: the
// configured count, or 0 for NoRetries. c must have its defaults applied.
func (c Config) retries() int {
	return max(c.MaxRetries, 0)
}

// IndexManagement is the strategy New applies to the remote index (seed §2.2).
type IndexManagement string

// Index management strategies.
const (
	// NoValidation trusts that the index exists and matches (default).
	NoValidation IndexManagement = "NoValidation"
	// ValidateIndex checks that the index exists and matches the
	// configuration (see Store.ValidateIndex).
	ValidateIndex IndexManagement = "ValidateIndex"
	// CreateIfNotExists creates the index when it is absent, and validates
	// it otherwise.
	CreateIfNotExists IndexManagement = "CreateIfNotExists"
)

// enumKey reduces an enumerated setting to the key the Parse functions look
// up, so that values copied from the seed, LlamaIndex (TypeScript or
// Python) or the Azure SDKs are understood: a leading "TypeName." prefix is
// removed when TypeName is one of typeNames (in any case), underscores are
// dropped and the rest is lower-cased. IndexManagement.CREATE_IF_NOT_EXISTS
// becomes createifnotexists, KnownVectorSearchAlgorithmKind.Hnsw becomes
// hnsw and EXHAUSTIVE_KNN becomes exhaustiveknn. Only the listed prefixes
// are removed: a dot may belong to the value itself (en.lucene, Edm.Int32).
// A value that reduces to nothing (_, IndexManagement.__) gives "_", which
// no Parse function takes, not "", which they take for the default.
func enumKey(s string, typeNames ...string) string {
	for _, t := range typeNames {
		if len(s) > len(t)+1 && s[len(t)] == '.' && strings.EqualFold(s[:len(t)], t) {
			s = s[len(t)+1:]
			break
		}
	}
	if k := strings.ToLower(strings.ReplaceAll(s, "_", "")); k != "" || s == "" {
		return k
	}
	return "_"
}

// ParseIndexManagement accepts NoValidation, ValidateIndex and
// CreateIfNotExists, also as the seed writes them
// (IndexManagement.CREATE_IF_NOT_EXISTS, NO_VALIDATION), in any case and
// with or without underscores (see enumKey); "" means NoValidation.
func ParseIndexManagement(s string) (IndexManagement, error) {
	switch enumKey(s, "IndexManagement") {
	case "", "novalidation":
		return NoValidation, nil
	case "validateindex":
		return ValidateIndex, nil
	case "createifnotexists":
		return CreateIfNotExists, nil
	}
	return "", fmt.Errorf("unknown strategy %q", s)
}

// VectorAlgorithm is the vector search algorithm of the index.
type VectorAlgorithm string

// Vector search algorithms.
const (
	// ExhaustiveKNN compares the query with every vector (default).
	ExhaustiveKNN VectorAlgorithm = "exhaustiveKnn"
	// HNSW is the approximate nearest-neighbour graph, for production.
	HNSW VectorAlgorithm = "hnsw"
)

// ParseVectorAlgorithm accepts exhaustiveKnn and hnsw, also as LlamaIndex
// and the Azure SDKs write them (KnownVectorSearchAlgorithmKind.Hnsw,
// VectorSearchAlgorithmKind.EXHAUSTIVE_KNN, exhaustive_knn), in any case
// (see enumKey); "" means ExhaustiveKNN.
func ParseVectorAlgorithm(s string) (VectorAlgorithm, error) {
	switch enumKey(s, "KnownVectorSearchAlgorithmKind", "VectorSearchAlgorithmKind") {
	case "", "exhaustiveknn":
		return ExhaustiveKNN, nil
	case "hnsw":
		return HNSW, nil
	}
	return "", fmt.Errorf("unknown algorithm %q", s)
}

// Compression is the vector compression of the index.
type Compression string

// Vector compressions.
const (
	// NoCompression stores full-precision vectors (default).
	NoCompression Compression = ""
	// BinaryQuantization stores one bit per dimension.
	BinaryQuantization Compression = "binaryQuantization"
	// ScalarQuantization stores one int8 per dimension.
	ScalarQuantization Compression = "scalarQuantization"
)

// ParseCompression accepts binaryQuantization and scalarQuantization, also
// as LlamaIndex and the Azure SDKs write them
// (KnownVectorSearchCompressionKind.ScalarQuantization,
// SCALAR_QUANTIZATION, and Python LlamaIndex's compression_type values
// binary and scalar), in any case (see enumKey); "" and "none" mean
// NoCompression.
func ParseCompression(s string) (Compression, error) {
	switch enumKey(s, "KnownVectorSearchCompressionKind", "VectorSearchCompressionKind") {
	case "", "none":
		return NoCompression, nil
	case "binaryquantization", "binary":
		return BinaryQuantization, nil
	case "scalarquantization", "scalar":
		return ScalarQuantization, nil
	}
	return "", fmt.Errorf("unknown compression %q", s)
}

// ParseLanguageAnalyzer returns the REST name of a predefined analyzer:
// s may be a value of the LexicalAnalyzerName enum of the REST definitions
// (en.lucene, zh-Hans.microsoft, standard.lucene, keyword) or its
// KnownAnalyzerNames identifier (EnLucene, ZhHansMicrosoft, StandardLucene,
// Keyword), in any case, with or without underscores (EN_LUCENE) and a
// KnownAnalyzerNames., KnownLexicalAnalyzerNames. or LexicalAnalyzerName.
// prefix (see enumKey); "" means none (the service's standard analyzer).
// The table is generated from the 2024-07-01 definitions.
func ParseLanguageAnalyzer(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if v, ok := azspec.ResolveAnalyzer(enumKey(s, "KnownAnalyzerNames", "KnownLexicalAnalyzerNames", "LexicalAnalyzerName")); ok {
		return v, nil
	}
	return "", fmt.Errorf("unknown analyzer %q", s)
}

// CredentialKind selects how requests are authenticated.
type CredentialKind string

// Credential kinds.
const (
	// KeyCredential sends the admin key in the api-key header. It is what
	// the empty CredentialKind means.
	KeyCredential CredentialKind = "key"
	// DefaultCredential uses azidentity's DefaultAzureCredential.
	DefaultCredential CredentialKind = "default"
	// ManagedIdentity uses azidentity's ManagedIdentityCredential, with the
	// client id read from Config.ManagedIdentityClientIDEnv when it is set.
	ManagedIdentity CredentialKind = "managedIdentity"
)

// ParseCredentialKind accepts key, default and managedIdentity, and the
// seed's credential classes AzureKeyCredential, DefaultAzureCredential and
// ManagedIdentityCredential, in any case and with or without underscores
// (azcred.Parse); "" means KeyCredential.
func ParseCredentialKind(s string) (CredentialKind, error) {
	if s == "" {
		return KeyCredential, nil
	}
	switch kind, _ := azcred.Parse(s); kind {
	case azcred.Key:
		return KeyCredential, nil
	case azcred.Default:
		return DefaultCredential, nil
	case azcred.ManagedIdentity:
		return ManagedIdentity, nil
	}
	return "", fmt.Errorf("unknown credential %s", azcred.Quote(s))
}

// Config holds the settings of the store; its YAML form is the
// sink.cloudsearch section of the Sluice configuration. Zero values mean the
// defaults (see DefaultConfig and WithDefaults).
type Config struct {
	// Endpoint is the service address, e.g. https://NAME.search.windows.net,
	// without user information, a query or a fragment (a key goes in the
	// KeyEnv variable; an endpoint holding one is refused, in the file and
	// in the variable, without showing it). Default: the value of the
	// EndpointEnv variable.
	Endpoint string `yaml:"endpoint"`
	// EndpointEnv names the variable read when Endpoint is empty.
	// Default: CLOUD_AI_SEARCH_ENDPOINT.
	EndpointEnv string `yaml:"endpointEnv"`
	// Key is the admin key. Prefer the KeyEnv variable: keys do not belong
	// in configuration files. It is used with Credential key only: New
	// warns when it is set beside another credential, which is used
	// instead. Default: the value of the KeyEnv variable.
	Key string `yaml:"key"`
	// KeyEnv names the variable read when Key is empty.
	// Default: CLOUD_AI_SEARCH_KEY.
	KeyEnv string `yaml:"keyEnv"`
	// Credential is key (AzureKeyCredential), default
	// (DefaultAzureCredential) or managedIdentity
	// (ManagedIdentityCredential); the seed's class names are accepted too.
	// Default: key.
	Credential CredentialKind `yaml:"credential"`
	// ManagedIdentityClientIDEnv names the variable holding the client id of
	// a user-assigned managed identity; when the variable is empty the
	// system-assigned identity is used. Default: AZURE_CLIENT_ID.
	ManagedIdentityClientIDEnv string `yaml:"managedIdentityClientIdEnv"`
	// APIVersion is the REST API version: one the service publishes
	// (see apiversion.go: a version Sluice does not know is refused, unless
	// it is dated after all it knows). Default: the value of
	// CLOUD_SEARCH_API_VERSION, else 2024-07-01.
	APIVersion string `yaml:"apiVersion"`
	// IndexName is the name of the search index. Required.
	IndexName string `yaml:"indexName"`
	// IndexManagement is NoValidation, ValidateIndex or CreateIfNotExists
	// (the seed's IndexManagement.CREATE_IF_NOT_EXISTS and the like are
	// accepted too; see ParseIndexManagement). Default: NoValidation.
	IndexManagement IndexManagement `yaml:"indexManagement"`
	// EmbeddingDimensionality is the length of every vector, 2 to 4096 (the
	// service's limits). Default: 1536.
	EmbeddingDimensionality int `yaml:"embeddingDimensionality"`
	// VectorAlgorithmType is exhaustiveKnn or hnsw (the spellings of
	// ParseVectorAlgorithm are accepted too). Default: exhaustiveKnn.
	VectorAlgorithmType VectorAlgorithm `yaml:"vectorAlgorithmType"`
	// CompressionType is binaryQuantization, scalarQuantization or empty
	// for none (the spellings of ParseCompression, such as
	// SCALAR_QUANTIZATION or scalar, are accepted too); it requires
	// vectorAlgorithmType hnsw. Default: none.
	CompressionType Compression `yaml:"compressionType"`
	// IDFieldKey is the key field. Default: id.
	IDFieldKey string `yaml:"idFieldKey"`
	// ChunkFieldKey is the text field. Default: chunk.
	ChunkFieldKey string `yaml:"chunkFieldKey"`
	// EmbeddingFieldKey is the vector field. Default: embedding.
	EmbeddingFieldKey string `yaml:"embeddingFieldKey"`
	// MetadataStringFieldKey is the field holding the metadata JSON string.
	// Default: metadata.
	MetadataStringFieldKey string `yaml:"metadataStringFieldKey"`
	// DocIDFieldKey is the field holding the reference document id.
	// Default: doc_id.
	DocIDFieldKey string `yaml:"docIdFieldKey"`
	// HiddenFieldKeys are fields created not retrievable and never returned:
	// a hidden filterable field's metadata key is also left out of the
	// metadata read back (the metadata string holds every key, as
	// LlamaIndex writes it), while filters on it still work. Default: none.
	HiddenFieldKeys []string `yaml:"hiddenFieldKeys"`
	// FilterableMetadataFieldKeys are the metadata keys that get an index
	// field and can be filtered on. Default: none.
	FilterableMetadataFieldKeys FilterableFields `yaml:"filterableMetadataFieldKeys"`
	// LanguageAnalyzer is the analyzer of the chunk field: a predefined
	// analyzer of the REST API (the LexicalAnalyzerName enum, e.g.
	// en.lucene, fr.microsoft, standard.lucene, keyword) or its
	// KnownAnalyzerNames identifier as in the seed (EnLucene, FrMicrosoft,
	// StandardLucene, Keyword), sent as the REST name (see
	// ParseLanguageAnalyzer). ValidateIndex requires an existing index's
	// chunk field to have it (no analyzer counts as standard.lucene).
	// Default: none: the index is created with the service's standard
	// analyzer (standard.lucene), and an existing index's analyzer is
	// accepted whatever it is.
	LanguageAnalyzer string `yaml:"languageAnalyzer"`
	// SemanticConfiguration is the semantic configuration used by
	// semantic_hybrid queries and created with the index. ValidateIndex
	// does not require an existing index to define it (other modes do not
	// need it); a semantic_hybrid query the service refuses on an index
	// without it is a *ConfigError naming this setting and the index's
	// configurations. Default: mySemanticConfig (LlamaIndex's name).
	SemanticConfiguration string `yaml:"semanticConfiguration"`
	// Timeout bounds each HTTP request attempt. Default: 60s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetries is how often a request that was throttled (429, 503;
	// Retry-After honoured), failed (408, 500, 502, 504) or got no answer
	// (a timeout, a reset), and a document with a retryable status, is
	// retried: at most MaxRetriesLimit; 0 means the default, 5, and
	// NoRetries (-1) sends everything once, as the embedder's maxRetries.
	// A request whose endpoint refuses connections is retried at most
	// twice, one whose host name does not resolve not at all; each
	// retry of a request that got no answer is logged as a warning (see
	// noAnswerPolicy). Default: 5.
	MaxRetries int `yaml:"maxRetries"`
	// UploadBatchSize is the most documents per upload request (at most
	// 1000). Default: 1000.
	UploadBatchSize int `yaml:"uploadBatchSize"`
	// UploadConcurrency is how many upload requests run at once. Default: 4.
	UploadConcurrency int `yaml:"uploadConcurrency"`
}

// DefaultConfig returns the configuration with every default filled in;
// only IndexName (and the endpoint and key, usually from the environment)
// remain to be set.
func DefaultConfig() Config {
	return Config{}.WithDefaults()
}

// WithDefaults returns c with every zero setting replaced by its default.
func (c Config) WithDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.EndpointEnv, EnvEndpoint)
	def(&c.KeyEnv, EnvKey)
	def(&c.ManagedIdentityClientIDEnv, EnvManagedIdentityClientID)
	def(&c.IDFieldKey, "id")
	def(&c.ChunkFieldKey, "chunk")
	def(&c.EmbeddingFieldKey, "embedding")
	def(&c.MetadataStringFieldKey, "metadata")
	def(&c.DocIDFieldKey, "doc_id")
	def(&c.SemanticConfiguration, "mySemanticConfig")
	if c.Credential == "" {
		c.Credential = KeyCredential
	}
	if c.IndexManagement == "" {
		c.IndexManagement = NoValidation
	}
	if c.VectorAlgorithmType == "" {
		c.VectorAlgorithmType = ExhaustiveKNN
	}
	if c.EmbeddingDimensionality == 0 {
		c.EmbeddingDimensionality = 1536
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.UploadBatchSize == 0 {
		c.UploadBatchSize = MaxBatchActions
	}
	if c.UploadConcurrency == 0 {
		c.UploadConcurrency = 4
	}
	if c.HiddenFieldKeys == nil {
		c.HiddenFieldKeys = []string{}
	}
	if c.FilterableMetadataFieldKeys == nil {
		c.FilterableMetadataFieldKeys = FilterableFields{}
	}
	return c
}

// normalize returns c with defaults applied and every enumerated setting in
// its canonical spelling. It assumes Validate passed.
func (c Config) normalize() Config {
	c = c.WithDefaults()
	c.IndexManagement, _ = ParseIndexManagement(string(c.IndexManagement))
	c.VectorAlgorithmType, _ = ParseVectorAlgorithm(string(c.VectorAlgorithmType))
	c.CompressionType, _ = ParseCompression(string(c.CompressionType))
	c.Credential, _ = ParseCredentialKind(string(c.Credential))
	if a, err := ParseLanguageAnalyzer(c.LanguageAnalyzer); err == nil {
		c.LanguageAnalyzer = a
	}
	c.FilterableMetadataFieldKeys = c.FilterableMetadataFieldKeys.normalized()
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	return c
}

var (
	fieldNameRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	apiVersionRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-(?i:preview))?$`)
)

// Validate checks every setting (after applying defaults) and returns a
// *ConfigError naming the first wrong one, e.g. sink.cloudsearch.indexName.
// The endpoint and key may be empty: New reads them from the environment.
func (c Config) Validate() error {
	c = c.WithDefaults()
	if err := c.validateEnums(); err != nil {
		return err
	}
	if err := c.validateNames(); err != nil {
		return err
	}
	return c.validateNumbers()
}

func (c Config) validateEnums() error {
	if _, err := ParseIndexManagement(string(c.IndexManagement)); err != nil {
		return configErr("indexManagement", err.Error(), "use NoValidation, ValidateIndex or CreateIfNotExists")
	}
	alg, err := ParseVectorAlgorithm(string(c.VectorAlgorithmType))
	if err != nil {
		return configErr("vectorAlgorithmType", err.Error(), "use exhaustiveKnn or hnsw")
	}
	comp, err := ParseCompression(string(c.CompressionType))
	if err != nil {
		return configErr("compressionType", err.Error(), "use binaryQuantization, scalarQuantization or leave it empty")
	}
	if comp != NoCompression && alg != HNSW {
		return configErr("compressionType", fmt.Sprintf("%s needs vectorAlgorithmType hnsw, but it is %s (API 2024-07-01 compresses HNSW vector indexes only)", comp, alg),
			"set vectorAlgorithmType: hnsw, or leave compressionType empty")
	}
	if _, err := ParseLanguageAnalyzer(c.LanguageAnalyzer); err != nil {
		return configErr("languageAnalyzer", fmt.Sprintf("%q is not a predefined analyzer", c.LanguageAnalyzer),
			"use a REST analyzer name such as en.lucene, fr.microsoft, standard.lucene or keyword, or its KnownAnalyzerNames identifier such as EnLucene or StandardLucene; leave it empty for the service's standard analyzer")
	}
	if _, err := ParseCredentialKind(string(c.Credential)); err != nil {
		return configErr("credential", err.Error(), "use key, default or managedIdentity")
	}
	if c.APIVersion != "" {
		if problem := apiVersionProblem(c.APIVersion); problem != "" {
			return configErr("apiVersion", fmt.Sprintf("%q %s", c.APIVersion, problem), apiVersionHint(true))
		}
	}
	return nil
}

func (c Config) validateNames() error {
	if c.IndexName == "" {
		return configErr("indexName", "is required", "set it to the name of the search index")
	}
	var ne *azspec.IndexNameError
	if err := azspec.CheckIndexName(c.IndexName); errors.As(err, &ne) {
		return configErr("indexName", fmt.Sprintf("%q is not a valid index name: %s", c.IndexName, ne.Problem),
			"the service's rule: "+azspec.IndexNameRule)
	}
	if c.Endpoint != "" {
		if reason, hint := endpointProblem(c.Endpoint, c.KeyEnv); reason != "" {
			return configErr("endpoint", reason, hint)
		}
	}
	for _, e := range []struct{ key, name, example string }{{"endpointEnv", c.EndpointEnv, EnvEndpoint}, {"keyEnv", c.KeyEnv, EnvKey}, {"managedIdentityClientIdEnv", c.ManagedIdentityClientIDEnv, EnvManagedIdentityClientID}} {
		// Not quoted: a key pasted in place of its variable's name must
		// not reach a message.
		if p := credential.EnvNameProblem(e.name); p != "" {
			return configErr(e.key, p, "name the environment variable that holds the value, such as "+e.example+", and put the value itself there")
		}
	}
	keys := map[string]bool{}
	for _, f := range c.FilterableMetadataFieldKeys {
		if keys[f.Key] {
			return configErr("filterableMetadataFieldKeys."+f.Key, fmt.Sprintf("metadata key %q is listed more than once", f.Key), "list each metadata key once, with the one field that holds it")
		}
		keys[f.Key] = true
	}
	seen := map[string]string{}
	fields := []struct{ key, name string }{
		{"idFieldKey", c.IDFieldKey}, {"chunkFieldKey", c.ChunkFieldKey}, {"embeddingFieldKey", c.EmbeddingFieldKey},
		{"metadataStringFieldKey", c.MetadataStringFieldKey}, {"docIdFieldKey", c.DocIDFieldKey},
	}
	for _, f := range c.FilterableMetadataFieldKeys.normalized() {
		fields = append(fields, struct{ key, name string }{"filterableMetadataFieldKeys." + f.Key, f.Field})
	}
	for _, f := range fields {
		if !fieldNameRE.MatchString(f.name) {
			return configErr(f.key, fmt.Sprintf("%q is not a valid field name", f.name), "start with a letter and use only letters, digits and underscores")
		}
		if prev, dup := seen[f.name]; dup {
			return configErr(f.key, fmt.Sprintf("field %q is also used by %s", f.name, settingPrefix+prev), "give each field its own name")
		}
		seen[f.name] = f.key
	}
	for _, f := range c.FilterableMetadataFieldKeys {
		if _, err := ParseFieldType(string(f.Type)); err != nil {
			return configErr("filterableMetadataFieldKeys."+f.Key, err.Error(), "use STRING, INT32, INT64, DOUBLE, BOOLEAN, COLLECTION or an Edm type such as Edm.String")
		}
	}
	for _, h := range c.HiddenFieldKeys {
		if h == c.IDFieldKey {
			return configErr("hiddenFieldKeys", fmt.Sprintf("the key field %q cannot be hidden", h), "remove it from hiddenFieldKeys")
		}
		// A key that names no written field becomes a field of its own
		// (strayHidden warns of it), which needs a valid name: the
		// service refuses to create the index otherwise.
		if !fieldNameRE.MatchString(h) {
			n := c.normalize()
			hint := "name one of the fields Sluice writes: " + strings.Join(n.writtenFields(), ", ")
			for _, s := range n.strayHidden() {
				if s.key == h && s.near != "" {
					hint = fmt.Sprintf("did you mean %q? %s", s.near, hint)
				}
			}
			return configErr("hiddenFieldKeys", fmt.Sprintf("%q is not a valid field name (a letter, then letters, digits and underscores)", h), hint)
		}
	}
	return nil
}

// endpointProblem returns why s cannot be the service endpoint, and how to
// fix it, or "" when it can: an http(s) URL with a host and without user
// information, a query or a fragment. Those three may hold a key, which
// every message and log line naming the endpoint would then show, so they
// are refused, and s is shown only when credential.EndpointShown allows
// it. keyEnv names the variable that should hold the key. Plain http is
// refused too unless the host is a loopback address (a test server such as
// `sluice devserver search`): azcore sends no key or token over it, so
// every request would fail, with an error about the network.
func endpointProblem(s, keyEnv string) (reason, hint string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "is not an http(s) URL: it holds " + credential.QuoteEndpoint(s), "use https://NAME.search.windows.net"
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "holds user information, a query or a fragment, which may hold a key (the value is not shown)",
			"use the service's address alone, https://NAME.search.windows.net, and put the admin key in " + keyEnv
	}
	if u.Scheme == "http" && !isLoopback(s) {
		return "is " + credential.QuoteEndpoint(s) + ", plain http, over which no key or token is sent (only to a loopback address, such as `sluice devserver search` on this machine)",
			"use https://" + u.Host + ", as the service requires"
	}
	return "", ""
}

// String describes the configuration with the key redacted, so printing a
// Config never leaks it.
func (c Config) String() string {
	type plain Config // without methods, so fmt does not recurse
	p := plain(c)
	if p.Key != "" {
		p.Key = "REDACTED"
	}
	return fmt.Sprintf("%+v", p)
}

// GoString is String, for the %#v verb.
func (c Config) GoString() string { return c.String() }

// LogValue logs the configuration with the key redacted.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func (c Config) validateNumbers() error {
	switch {
	case c.EmbeddingDimensionality < azspec.MinVectorDimensions || c.EmbeddingDimensionality > azspec.MaxVectorDimensions:
		return configErr("embeddingDimensionality", fmt.Sprintf("%d is out of range", c.EmbeddingDimensionality),
			fmt.Sprintf("set it to the embedding model's output size (%d to %d, the service's limits), e.g. 1536", azspec.MinVectorDimensions, azspec.MaxVectorDimensions))
	case c.Timeout < 0:
		return configErr("timeout", "must not be negative", "use a duration such as 60s")
	case c.MaxRetries < NoRetries || c.MaxRetries > MaxRetriesLimit:
		return configErr("maxRetries", fmt.Sprintf("%d is out of range", c.MaxRetries),
			fmt.Sprintf("0 = default (%d), -1 = no retries, at most %d", DefaultMaxRetries, MaxRetriesLimit))
	case c.UploadBatchSize < 1 || c.UploadBatchSize > MaxBatchActions:
		return configErr("uploadBatchSize", fmt.Sprintf("%d is out of range", c.UploadBatchSize), "use 1 to 1000 (the service's limit per request)")
	case c.UploadConcurrency < 1 || c.UploadConcurrency > 64:
		return configErr("uploadConcurrency", fmt.Sprintf("%d is out of range", c.UploadConcurrency), "use 1 to 64")
	}
	return nil
}
