// Package cloudsearch is a sink.VectorStore backed by Cloud AI Search (Azure
// AI Search) over its REST API, api-version 2024-07-01 by default.
//
// There is no official Go data-plane SDK, so the store speaks REST through an
// azcore pipeline: azcore's key-credential or bearer-token policy
// authenticates, and azcore's retry policy retries, up to maxRetries times
// with exponential backoff honouring Retry-After and retry-after-ms, every
// request answered 408 (Request Timeout), 429 (Too Many Requests), 500
// (Internal Server Error), 502 (Bad Gateway), 503 (Service Unavailable) or
// 504 (Gateway Timeout). A request that got no answer is retried by the
// store itself, within the same budget, with a warning logged for each
// retry (WithLogger), and in proportion to the cause: an attempt that ran
// past sink.cloudsearch.timeout or a connection reset up to maxRetries
// times, a refused connection at most twice, a host name that does not
// resolve or a certificate that does not verify not at all (see
// noAnswerPolicy). Other answers are not retried, nor is a Microsoft Entra
// credential that cannot get a token (a *CredentialError); an api-version
// the service refuses is a *ConfigError, as is one that cannot be a
// published version, which is refused before any request (see
// apiversion.go), and so is a semantic_hybrid query refused (400) by an
// index that has no semantic configuration of the configured name (see
// Store.Query). Retrying a request the service had
// carried out before failing is harmless for uploads and deletes; for index
// creation, answered 409 on the retry, see Store.CreateIndex. Per-document
// failures inside a 207 answer are retried by this package (only the keys
// whose status is retryable: 409, 422, 503) with exponential backoff; every
// node passed to Add is either acknowledged or reported in a
// *sink.WriteError.
//
// Documents are written in the format of LlamaIndex's
// AzureAISearchVectorStore, as its Python store writes them: the metadata
// field holds a JSON string with _node_content, _node_type, document_id,
// doc_id and ref_doc_id, and the doc_id field holds the reference document
// id. Documents written by LlamaIndex's Python and TypeScript stores are
// read back (GetNodes, Query). Delete(refDocID) finds nodes by the doc_id
// field, so it removes the nodes of refDocID that Sluice or LlamaIndex's
// Python store wrote, but none that LlamaIndex.TS wrote: that store puts
// the node id in doc_id (the reference document id only in the metadata
// string, which cannot be filtered). See Store.Delete.
//
// GetNodes, PageNodes, Delete and DeleteDocs read documents in key order,
// with no limit on their number, when the index's key field is sortable,
// as in every index Sluice creates. LlamaIndex's Python store creates its key
// with sortable false; ValidateIndex accepts such an index, and documents
// are then read with skip, which the service caps: a read of more than
// 101,000 documents fails with a *ScanLimitError (ErrScanLimit), and
// DeleteDocs splits a group of documents that has more, so that only a
// document that has more fails, as with Delete. The store learns which way
// to read from the definition that ValidateIndex or CreateIndex saw, or,
// with indexManagement NoValidation (or WithoutIndexManagement), from one
// read of the definition before the first read of documents.
//
// NodeVectors reads back nodes' texts and vectors, so that a run writes a
// chunk whose text a node it committed holds (a copied or renamed file)
// without embedding it again. It needs the vector field retrievable, as
// CreateIndex creates it (and LlamaIndex.TS does); on an index whose
// vector field is not, it lends nothing (see Store.LendsVectors).
//
// Settings come from a Config (YAML key sink.cloudsearch); New resolves the
// endpoint, key and API version from the environment
// (CLOUD_AI_SEARCH_ENDPOINT, CLOUD_AI_SEARCH_KEY, CLOUD_SEARCH_API_VERSION),
// refusing, without showing it, an endpoint with user information, a query
// or a fragment, where a key could hide and from where every message
// naming the endpoint would show it (and a plain-http endpoint that is not
// on a loopback address, over which azcore sends no credential), builds
// the credential and applies the index management strategy, unless
// WithoutIndexManagement leaves the index to the caller (`sluice index`
// and `sluice doctor`; the store still knows the strategy, for Doctor and
// for the remedy of a missing index).
package cloudsearch
