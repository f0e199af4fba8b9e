package cloudsearch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice/sink"
)

// LlamaIndex's reserved metadata keys (llama_index.core.vector_stores.utils).
const (
	keyNodeContent = "_node_content"
	keyNodeType    = "_node_type"
	keyDocumentID  = "document_id"
	keyDocID       = "doc_id"
	keyRefDocID    = "ref_doc_id"
)

// nodeContent is LlamaIndex's TextNode JSON as stored in _node_content: the
// node without its text (which lives in the chunk field) and embedding.
type nodeContent struct {
	ID                        string                 `json:"id_"`
	Embedding                 []float32              `json:"embedding"`
	Metadata                  map[string]any         `json:"metadata"`
	ExcludedEmbedMetadataKeys []string               `json:"excluded_embed_metadata_keys"`
	ExcludedLLMMetadataKeys   []string               `json:"excluded_llm_metadata_keys"`
	Relationships             map[string]relatedNode `json:"relationships"`
	MetadataTemplate          string                 `json:"metadata_template"`
	MetadataSeparator         string                 `json:"metadata_separator"`
	Text                      string                 `json:"text"`
	MimeType                  string                 `json:"mimetype"`
	StartCharIdx              *int                   `json:"start_char_idx"`
	EndCharIdx                *int                   `json:"end_char_idx"`
	TextTemplate              string                 `json:"text_template"`
	ClassName                 string                 `json:"class_name"`
}

// relatedNode is LlamaIndex's RelatedNodeInfo.
type relatedNode struct {
	NodeID    string         `json:"node_id"`
	NodeType  string         `json:"node_type"`
	Metadata  map[string]any `json:"metadata"`
	Hash      *string        `json:"hash"`
	ClassName string         `json:"class_name"`
}

// relSource is LlamaIndex's NodeRelationship.SOURCE in Python; TypeScript
// spells it "SOURCE". objectTypeDocument is ObjectType.DOCUMENT.
const (
	relSource          = "1"
	objectTypeDocument = "4"
)

// newNodeContent builds the _node_content of n, the way LlamaIndex's
// node_to_metadata_dict does with its text removed.
func newNodeContent(n *sink.Node, md map[string]any) nodeContent {
	start, end := n.StartChar, n.EndChar
	return nodeContent{
		ID:                        n.ID,
		Metadata:                  md,
		ExcludedEmbedMetadataKeys: []string{},
		ExcludedLLMMetadataKeys:   []string{},
		Relationships: map[string]relatedNode{relSource: {
			NodeID: n.RefDocID, NodeType: objectTypeDocument, Metadata: map[string]any{}, ClassName: "RelatedNodeInfo",
		}},
		MetadataTemplate:  "{key}: {value}",
		MetadataSeparator: "\n",
		MimeType:          "text/plain",
		StartCharIdx:      &start,
		EndCharIdx:        &end,
		TextTemplate:      "{metadata_str}\n\n{content}",
		ClassName:         "TextNode",
	}
}

// metadataString is the JSON of the metadata field: the node's metadata
// plus LlamaIndex's reserved keys.
func metadataString(n *sink.Node) (string, error) {
	md := make(map[string]any, len(n.Metadata)+5)
	for k, v := range n.Metadata {
		md[k] = v
	}
	plain := make(map[string]any, len(n.Metadata))
	for k, v := range n.Metadata {
		plain[k] = v
	}
	nc, err := json.Marshal(newNodeContent(n, plain))
	if err != nil {
		return "", fmt.Errorf("cloudsearch: node %s: encode metadata: %w", n.ID, err)
	}
	md[keyNodeContent] = string(nc)
	md[keyNodeType] = "TextNode"
	md[keyDocumentID] = n.RefDocID
	md[keyDocID] = n.RefDocID
	md[keyRefDocID] = n.RefDocID
	b, err := json.Marshal(md)
	if err != nil {
		return "", fmt.Errorf("cloudsearch: node %s: encode metadata: %w", n.ID, err)
	}
	return string(b), nil
}

// document is one index document; encoding/json writes its keys sorted, so
// encoded documents are deterministic.
type document map[string]any

// toDocument maps n to an index document with the given search action.
func (c *Config) toDocument(n *sink.Node, action string) (document, error) {
	ms, err := metadataString(n)
	if err != nil {
		return nil, err
	}
	d := document{
		"@search.action":         action,
		c.IDFieldKey:             n.ID,
		c.ChunkFieldKey:          n.Text,
		c.EmbeddingFieldKey:      n.Embedding,
		c.MetadataStringFieldKey: ms,
		c.DocIDFieldKey:          n.RefDocID,
	}
	if action == actionMerge {
		delete(d, c.EmbeddingFieldKey) // keep the stored vector
	}
	for _, ff := range c.FilterableMetadataFieldKeys {
		v, ok := n.Metadata[ff.Key]
		if !ok || v == nil {
			// Explicitly null: merge and mergeOrUpload keep a stored
			// document's old value of any field the action leaves out,
			// and filters would go on matching metadata it no longer has.
			d[ff.Field] = nil
			continue
		}
		fv, err := fieldValue(v, ff)
		if err != nil {
			return nil, err
		}
		d[ff.Field] = fv
	}
	return d, nil
}

// fieldValue converts a metadata value to the JSON the field's type needs.
// A value that does not fit is an error naming the setting that declares
// the field and saying how to make them fit (see fitHint).
func fieldValue(v any, ff FilterableField) (any, error) {
	bad := func() error {
		return fmt.Errorf("metadata %q is %s, %v, which does not fit field %s of type %s (%sfilterableMetadataFieldKeys.%s); %s",
			ff.Key, sink.Kind(v), v, ff.Field, ff.Type, settingPrefix, ff.Key, fitHint(v, ff))
	}
	switch {
	case ff.Type.collection():
		if list, ok := sink.ValueList(v); ok {
			out := make([]string, len(list))
			for i, e := range list {
				out[i] = fmt.Sprint(e)
			}
			return out, nil
		}
		return []string{text(v)}, nil
	case ff.Type.numeric():
		f, ok := toNumber(v)
		if !ok || !ff.Type.holds(f) {
			return nil, bad()
		}
		if ff.Type == Double {
			return f, nil
		}
		return int64(f), nil
	case ff.Type == Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, bad()
	case ff.Type == String:
		if _, ok := sink.ValueList(v); ok {
			return nil, bad()
		}
		return text(v), nil
	case ff.Type == DateTimeOffset:
		t, ok := toTime(v)
		if !ok || !dateInRange(t) {
			return nil, fmt.Errorf("metadata %q is %s, %v, which is not a date and time of the years 0001 to 9999 in RFC 3339 form such as 2024-05-01T10:00:00Z (a time.Time or such a string), as field %s of type %s needs (%sfilterableMetadataFieldKeys.%s)",
				ff.Key, sink.Kind(v), v, ff.Field, ff.Type, settingPrefix, ff.Key)
		}
		return timeText(t), nil
	}
	return v, nil
}

// fitHint says how to make the metadata value v fit the field ff, which it
// does not: give the document another value (source.metadata sets it), or
// declare the field with a type that holds it, which takes the index
// created again, since the service cannot change a field's type.
func fitHint(v any, ff FilterableField) string {
	pair := func(typ string) string {
		return fmt.Sprintf("%sfilterableMetadataFieldKeys: {%s: [%s, %s]}", settingPrefix, ff.Key, ff.Field, typ)
	}
	var fix string
	_, isList := sink.ValueList(v)
	_, isNumber := toNumber(v)
	switch {
	case isList:
		fix = "declare a list as a collection, " + pair("COLLECTION") + ", or give the document a single value"
	case ff.Type.numeric() && isNumber:
		fix = "declare the field " + pair("DOUBLE") + " (any number)"
		if ff.Type == Int32 {
			fix += " or " + pair("INT64")
		}
		fix += ", or give the document a whole number in the range of " + string(ff.Type)
	case ff.Type.numeric():
		fix = "give the document a number, or declare the field " + pair("STRING")
	case ff.Type == Boolean:
		fix = "give the document true or false, or declare the field " + pair("STRING")
	default:
		fix = "give the document a value of that type, or declare the field " + pair("STRING")
	}
	return fix + " (source.metadata sets a document's metadata; a field of another type needs the index created again: " +
		"`sluice index delete`, `sluice index create`, then `sluice run`, " + withConfig + ")"
}

// text is v as a string field holds it: a time in RFC 3339 form (as a
// filter on it is written), anything else as fmt prints it.
func text(v any) string {
	if t, ok := v.(time.Time); ok {
		return timeText(t)
	}
	return fmt.Sprint(v)
}

// fromDocument rebuilds a node from a document read back from the index.
// It reads documents written by Sluice and by LlamaIndex's Python store
// (doc_id holds the reference document id) and TypeScript store (doc_id
// holds the node id; the metadata string has the reference id).
func (c *Config) fromDocument(d map[string]any) sink.Node {
	str := func(k string) string { s, _ := d[k].(string); return s }
	n := sink.Node{ID: str(c.IDFieldKey), Text: str(c.ChunkFieldKey), RefDocID: str(c.DocIDFieldKey)}
	if emb, ok := d[c.EmbeddingFieldKey].([]any); ok {
		n.Embedding = make([]float32, len(emb))
		for i, e := range emb {
			f, _ := e.(float64)
			n.Embedding[i] = float32(f)
		}
	}
	var md map[string]any
	if ms := str(c.MetadataStringFieldKey); ms != "" {
		_ = json.Unmarshal([]byte(ms), &md) // a foreign, non-JSON metadata string leaves Metadata empty
	}
	n.Metadata = map[string]any{}
	for k, v := range md {
		if !sink.ReservedMetadataKey(k) {
			n.Metadata[k] = normalizeValue(v)
		}
	}
	// A hidden filterable field is not returned in the metadata string
	// either, where its value is kept too (as LlamaIndex writes it).
	if len(c.HiddenFieldKeys) > 0 {
		hidden := c.hidden()
		for _, f := range c.FilterableMetadataFieldKeys {
			if hidden[cmp.Or(f.Field, f.Key)] {
				delete(n.Metadata, f.Key)
			}
		}
	}
	nc := parseNodeContent(md[keyNodeContent])
	if n.ID == "" {
		n.ID = nc.id
	}
	if n.Text == "" {
		n.Text = nc.text
	}
	n.StartChar, n.EndChar = nc.start, nc.end
	for _, k := range []string{keyRefDocID, keyDocID, keyDocumentID} {
		if s, ok := md[k].(string); ok && s != "" {
			n.RefDocID = s
			return n
		}
	}
	if nc.source != "" {
		n.RefDocID = nc.source
	}
	return n
}

// parsedContent is what fromDocument needs from _node_content, in either
// LlamaIndex's Python (snake_case) or TypeScript (camelCase) spelling.
type parsedContent struct {
	id, text, source string
	start, end       int
}

func parseNodeContent(v any) parsedContent {
	s, _ := v.(string)
	var raw map[string]any
	if s == "" || json.Unmarshal([]byte(s), &raw) != nil {
		return parsedContent{}
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := raw[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	num := func(keys ...string) int {
		for _, k := range keys {
			if f, ok := raw[k].(float64); ok {
				return int(f)
			}
		}
		return 0
	}
	pc := parsedContent{
		id:    str("id_", "id"),
		text:  str("text"),
		start: num("start_char_idx", "startCharIdx"),
		end:   num("end_char_idx", "endCharIdx"),
	}
	if rels, ok := raw["relationships"].(map[string]any); ok {
		for _, k := range []string{relSource, "SOURCE"} {
			if r, ok := rels[k].(map[string]any); ok {
				for _, idk := range []string{"node_id", "nodeId"} {
					if id, ok := r[idk].(string); ok && id != "" {
						pc.source = id
					}
				}
			}
		}
	}
	return pc
}

// normalizeValue turns a JSON list of strings into []string, the type
// sink.MetadataFilters.Match and callers expect for collections.
func normalizeValue(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return v
		}
		out[i] = s
	}
	return out
}
