// Package searchtest is a strict, in-memory stand-in for the Cloud AI Search
// (Azure AI Search) REST API, api-version 2024-07-01, for tests and for the
// `sluice devserver search` command.
//
// The server speaks the real wire protocol and enforces what the service
// enforces, so that a client that passes against it has a good chance of
// passing against the service:
//
//   - the api-version query parameter: a version the service publishes
//     (2024-07-01, and the others that have vector search as the store
//     uses it; each is answered with 2024-07-01's rules), else 400 with
//     the service's message for a missing or unserved version,
//     InvalidAPIVersionMessage;
//   - the api-key header or an Authorization: Bearer token (401 when missing,
//     403 when the key is wrong);
//   - index and field naming rules (the index name rule is shared with the
//     store's Config.Validate), exactly one Edm.String key field, vector
//     fields with 2 to 4096 dimensions (the range is shared too) and an
//     existing vector profile, and no
//     compression on exhaustive KNN profiles (2024-07-01 quantizes HNSW only);
//   - analyzer names: analyzer, searchAnalyzer and indexAnalyzer must be a
//     value of the LexicalAnalyzerName enum (en.lucene, not the SDKs'
//     identifier EnLucene) or one of the index's own analyzers, and only on
//     searchable string fields;
//   - document key characters and length, at most 1000 actions and
//     16 MiB per docs/index request (413 above), unknown fields, field types,
//     vector dimensions;
//   - terms of at most 32,766 UTF-8 bytes (MaxTermBytes): a document with a
//     longer string in a filterable, sortable or facetable string field (or
//     collection element) is refused alone, 400 in a 207 answer, with the
//     service's "contains a term that is too large to process" message;
//   - $orderby only on sortable fields (400 "'NAME' is not a sortable
//     field"), skip at most 100,000 (400 ParameterValueOutOfRange), and no
//     sessionId starting with '_';
//   - filters only on filterable fields, in the OData subset Sluice emits,
//     with literals of the field's type (an Edm.DateTimeOffset field takes
//     an unquoted RFC 3339 literal and compares instants; a quoted string
//     there is refused);
//   - with Options.SpecDir, every request body is validated against the JSON
//     schemas of the official swagger definitions (IndexBatch, SearchRequest,
//     SearchIndex), except that vector fields may have up to 4096
//     dimensions, as the service documents and takes, where the 2024-07-01
//     swagger says 2048; and a member the definitions do not declare (a
//     misspelled field attribute, a search parameter of another API
//     version) is refused 400 naming it and its place, as the service
//     refuses it, although the swagger leaves its objects open (annotations,
//     "@odata.*" and "@search.*", are allowed anywhere, and the fields of a
//     batch's documents are checked against the index instead).
//
// Supported routes (both /indexes/NAME and /indexes('NAME') forms):
//
//	GET|PUT|DELETE /indexes/NAME         POST /indexes        GET /indexes
//	GET /indexes/NAME/stats (or search.stats)
//	POST /indexes/NAME/docs/index        POST /indexes/NAME/docs/search
//	GET /indexes/NAME/docs/$count        GET /indexes/NAME/docs/KEY or docs('KEY')
//
// GET /indexes/NAME answers the definition the way the service does: every
// field attribute the request left out is filled in with the service's
// default (string fields are searchable unless created with searchable
// false), and analyzer, searchAnalyzer, indexAnalyzer, dimensions and
// vectorSearchProfile are null when unset.
//
// Scoring: vector queries are exact (exhaustive) for every algorithm, with
// the profile's metric; cosine scores are 1/(1+(1-cos)) and euclidean scores
// 1/(1+d) as the service documents; dotProduct scores are 1/(1+e^-dot) (the
// service's exact formula is not documented). Text queries use BM25 (k1=1.2,
// b=0.75) over the searchable string fields with a simple lower-casing word
// tokenizer. Text and vector rankings are fused by reciprocal rank fusion,
// sum of weight/(60+rank) with 1-based ranks. Semantic ranking is a
// deterministic stand-in: the top 50 fused results get an
// @search.rerankerScore in [0, 4] from the share of query words found in the
// semantic configuration's prioritized fields, and are reordered by it.
//
// Filters apply before the k nearest vectors are chosen (vectorFilterMode
// preFilter, the default) or after (postFilter, which can return fewer
// than k).
//
// Paging: top defaults to 50 and skip is at most 100000; a response carries
// at most MaxPageSize results, and when top asks for more it also carries
// @search.nextPageParameters and @odata.nextLink for the rest. Results are
// ordered by score, ties by key, so every answer is deterministic, unless
// $orderby names sortable fields or search.score() (up to 32 clauses, asc or
// desc; absent values first when ascending; strings compared ordinally).
// With Options.Replicas, ties are ordered by the replica answering, which
// the sessionId picks (or turn by turn without one): the service documents
// the order of equal scores as arbitrary, so paging with skip through
// results of equal score may overlap or miss documents.
//
// What it does not emulate: the Lucene (full) query syntax and the simple
// syntax operators, analyzers and stemming, scoring profiles, facets,
// geo.distance in orderby, orderby with semantic ranking, highlights, captions and answers (ignored), suggesters and
// autocomplete, GET search, complex (Edm.ComplexType) fields, geo
// functions, vectorizers and text vector queries, approximate (HNSW) recall loss and quantization effects, ETag
// concurrency, indexers, skillsets, data sources, synonym maps and service
// statistics. Documents live in memory only.
package searchtest
