package cloudsearch

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// maxSearchInBytes bounds the value list of one search.in filter of
// DeleteDocs: the bytes of its values, quotes doubled, and delimiters. The
// service takes a docs/search body of about 16 MB and bounds a filter by
// its number of clauses rather than its length (search.in being one);
// 1 MiB is about what 1000 keys of the longest the service accepts (1024
// characters) take in a filter of ExistingIDs, and even if JSON escaped
// every byte of it (\u003c, 6 bytes) the body would stay well under
// 16 MB. Reference document ids have no such bound of their own: the
// doc_id field takes up to 32,766 bytes, so 1000 of them could exceed
// the request's size.
const maxSearchInBytes = 1 << 20

// DeleteDocs removes every node whose RefDocID is one of refDocIDs, as
// Delete does for each, in far fewer requests: it finds the nodes of up to
// 1000 documents at a time with one search.in filter on the doc_id field
// (docIdFieldKey; a search per 1000 nodes found, not per document), and
// deletes them with DeleteNodes, whose batches (uploadBatchSize actions)
// mix the documents. As Delete does, it deletes each page of keys
// before reading the next when the index's key field is sortable, and
// otherwise reads every key of a group first: a group that cannot be read
// whole that way (a *ScanLimitError, returned before anything is deleted:
// more nodes than paging with skip reaches, or pages that did not line up)
// is split in halves, down to single documents, for which the error is
// Delete's. So DeleteDocs deletes what the calls of Delete would, and
// fails where one of them would.
//
// A group's value list is at most 1 MiB (see maxSearchInBytes) and uses a
// delimiter that occurs in none of its ids (",", else "|", ";", "~", "^"
// or a tab); an id that search.in cannot list (empty, with white space at
// either end, or containing every delimiter) is deleted alone, by Delete.
// Duplicates are deleted once, and an empty refDocIDs sends no request.
// An error stops DeleteDocs: the groups before it are deleted, as the
// documents before a failing Delete would be. Nodes LlamaIndex.TS wrote
// are not found, as with Delete (see Delete). It makes Store a
// pipeline.DocsDeleter.
func (s *Store) DeleteDocs(ctx context.Context, refDocIDs []string) error {
	if len(refDocIDs) == 0 {
		return nil
	}
	for _, g := range docIDGroups(dedupe(refDocIDs)) {
		if err := s.deleteDocGroup(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// deleteDocGroup deletes the nodes of the reference documents ids, one
// group of docIDGroups, with one search.in filter; a single id is
// Delete's. A *ScanLimitError, which the read of an index whose key is not
// sortable returns before anything is deleted, splits the group in two.
func (s *Store) deleteDocGroup(ctx context.Context, ids []string) error {
	if len(ids) == 1 {
		return s.Delete(ctx, ids[0])
	}
	op := "find nodes of " + strconv.Itoa(len(ids)) + " documents"
	err := s.deleteMatching(ctx, op, searchIn(s.cfg.DocIDFieldKey, ids))
	if sle := (*ScanLimitError)(nil); !errors.As(err, &sle) {
		return err
	}
	half := len(ids) / 2
	if err := s.deleteDocGroup(ctx, ids[:half:half]); err != nil {
		return err
	}
	return s.deleteDocGroup(ctx, ids[half:])
}

// docIDGroups splits ids into groups that searchIn lists in one search.in
// filter: each id goes with the ids whose first fitting delimiter (in the
// order of searchInDelimiters) is its own, so the group shares it, and a
// group has at most idsPerQuery ids and maxSearchInBytes bytes of values
// (one larger id alone). An id that fits no delimiter is a group of its
// own.
func docIDGroups(ids []string) [][]string {
	var groups [][]string
	buckets := make([][]string, len(searchInDelimiters))
	for _, id := range ids {
		i := slices.IndexFunc(searchInDelimiters, func(d string) bool { return searchInFits(id, d) })
		if i < 0 {
			groups = append(groups, []string{id})
			continue
		}
		buckets[i] = append(buckets[i], id)
	}
	for i, b := range buckets {
		var g []string
		size := 0
		for _, id := range b {
			n := len(id) + strings.Count(id, "'") + len(searchInDelimiters[i])
			if len(g) > 0 && (len(g) == idsPerQuery || size+n > maxSearchInBytes) {
				groups = append(groups, g)
				g, size = nil, 0
			}
			g = append(g, id)
			size += n
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}
