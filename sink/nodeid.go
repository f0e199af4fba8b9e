package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// NodeID returns the deterministic id of a chunk: derived from the reference
// document id, the chunk text and the chunk's ordinal among identical chunks
// of that document (0 for the first occurrence). Re-running an ingestion
// therefore overwrites nodes instead of duplicating them, and an unchanged
// chunk keeps its id when text around it changes.
//
// The id is 64 lowercase hex digits: only letters and digits, never starting
// with '_', well under 1024 characters, so it is a valid key in every store.
func NodeID(refDocID, text string, ordinal int) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(refDocID))))
	h.Write([]byte{':'})
	h.Write([]byte(refDocID))
	h.Write([]byte(strconv.Itoa(ordinal)))
	h.Write([]byte{':'})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}
