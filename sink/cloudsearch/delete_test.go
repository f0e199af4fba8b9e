package cloudsearch

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// uploadRaw posts documents to docs/index of the test server as another
// client (LlamaIndex, say) would, and fails the test unless all are stored.
func uploadRaw(t *testing.T, url string, docs ...map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"value": docs})
	if err != nil {
		t.Fatal(err)
	}
	if status, b := postJSON(t, url, "/indexes/docs/docs/index", body); status != http.StatusOK {
		t.Fatalf("upload: %d %s", status, b)
	}
}

// llamaIndexUpload reads testdata/file, a document as a LlamaIndex store
// wrote it (a search result), as the upload action of uploadRaw.
func llamaIndexUpload(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "@search.score") // a search result's; not a field
	doc["@search.action"] = "upload"
	return doc
}

// TestDeleteByRefDocIDOfLlamaIndexTSDocuments pins the documented limit
// of Delete: it finds nodes by the doc_id field, which LlamaIndex.TS fills
// with the node id, so Delete(refDocID) removes the reference document's
// nodes that Sluice wrote but leaves those LlamaIndex.TS wrote (GetNodes
// still reports refDocID as theirs); Delete of such a node's id removes it.
func TestDeleteByRefDocIDOfLlamaIndexTSDocuments(t *testing.T) {
	s, srv := startStore(t, searchtest.Options{}, nil)
	ctx := context.Background()
	ts := llamaIndexUpload(t, "llamaindex_ts_doc.json")
	const refDocID, tsNodeID = "doc-ice", "9b2d4f60-1c1e-4c55-8f0b-6a2f0e3d7b22"
	if ts["doc_id"] != tsNodeID {
		t.Fatalf("the LlamaIndex.TS document's doc_id is %v, want its node id", ts["doc_id"])
	}
	uploadRaw(t, s.Config().Endpoint, ts)
	ours := makeNodes(refDocID, 2)
	if _, err := s.Add(ctx, ours); err != nil {
		t.Fatal(err)
	}

	if err := s.Delete(ctx, refDocID); err != nil {
		t.Fatalf("Delete(%q) = %v, want nil", refDocID, err)
	}
	left, err := s.GetNodes(ctx, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != tsNodeID {
		t.Fatalf("after Delete(%q): %v, want only the LlamaIndex.TS node %s left", refDocID, sortedIDs(left), tsNodeID)
	}
	if left[0].RefDocID != refDocID {
		t.Errorf("the LlamaIndex.TS node reads back with RefDocID %q, want %q (from its metadata string)", left[0].RefDocID, refDocID)
	}

	if err := s.Delete(ctx, tsNodeID); err != nil {
		t.Fatal(err)
	}
	if docs := srv.Documents("docs"); len(docs) != 0 {
		t.Errorf("%d documents left after Delete of the LlamaIndex.TS node's id, want 0", len(docs))
	}
	assertNoClientErrors(t, srv)
}
