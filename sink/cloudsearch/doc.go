// Package cloudsearch is a sink.VectorStore backed by Cloud AI Search (Azure
// AI Search) over its REST API, api-version 2024-07-01 by default.
//
// There is no official Go data-plane SDK, so the store speaks REST through an
// azcore pipeline: azcore's key-credential or bearer-token policy
// authenticates, and azcore's retry policy retries throttled requests (429,
// 503) honouring Retry-After and retry-after-ms. Per-document failures inside
// a 207 answer are retried by this package (only the keys whose status is
// retryable: 409, 422, 503) with exponential backoff; every node passed to
// Add is either acknowledged or reported in a *sink.WriteError.
//
// Documents are written in the format LlamaIndex's AzureAISearchVectorStore
// uses (Python and TypeScript), so indexes are shared both ways: the metadata
// field holds a JSON string with _node_content, _node_type, document_id,
// doc_id and ref_doc_id, and the doc_id field holds the reference document
// id, so Delete(refDocID) works.
//
// Settings come from a Config (YAML key sink.cloudsearch); New resolves the
// endpoint, key and API version from the environment
// (CLOUD_AI_SEARCH_ENDPOINT, CLOUD_AI_SEARCH_KEY, CLOUD_SEARCH_API_VERSION),
// builds the credential and applies the index management strategy.
package cloudsearch
