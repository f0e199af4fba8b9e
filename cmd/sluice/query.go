package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
)

// filterFlags collects repeated --filter flags.
type filterFlags struct {
	values []string
	or     bool
}

func (f *filterFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.values, "filter", nil,
		"metadata filter: `KEY=VALUE` (EQ), KEY==VALUE (EQ, VALUE taken literally, e.g. a value that starts with in:), "+
			"KEY=in:V1,V2 (IN) or, for values that hold commas, KEY=in:[\"V1\",\"V2\"] (IN on a JSON array of strings and numbers, "+
			"e.g. 'author=in:[\"Smith, J\",\"Lee\"]' in single quotes for the shell); "+
			"the stores support no other operators; repeatable, combined with AND (see --or)")
	cmd.Flags().BoolVar(&f.or, "or", false, "combine --filter flags with OR instead of AND")
}

// parse turns the flags into MetadataFilters; nil when there are none.
func (f *filterFlags) parse() (*sink.MetadataFilters, error) {
	if len(f.values) == 0 {
		return nil, nil
	}
	mf := &sink.MetadataFilters{Condition: sink.And}
	if f.or {
		mf.Condition = sink.Or
	}
	for _, v := range f.values {
		filter, err := parseFilter(v)
		if err != nil {
			return nil, err
		}
		mf.Filters = append(mf.Filters, filter)
	}
	if err := mf.Validate(); err != nil {
		return nil, &usageError{err}
	}
	return mf, nil
}

// filterSyntax is the --filter syntax, repeated by its errors.
const filterSyntax = "the stores support EQ (KEY=V or KEY==V) and IN (KEY=in:A,B)"

// unsupportedPrefixes are LlamaIndex's operators (FilterOperator's values,
// which the errors name in upper case as LlamaIndex does) that a --filter
// value might name as in: names IN; opIsEmpty, which takes no values, also
// alone. Read as EQ on the literal value, they would match nothing and say
// nothing; a value that really starts with one is written with ==.
var unsupportedPrefixes = []string{"nin", "any", "all", "contains", "text_match_insensitive", "text_match", opIsEmpty}

const opIsEmpty = "is_empty"

// unsupportedOperators are the comparison operators a --filter might be
// written with, longest first, and LlamaIndex's names for them.
var unsupportedOperators = []struct{ op, name string }{
	{"!=", "NE"},
	{">=", "GTE"},
	{"<=", "LTE"},
	{">", "GT"},
	{"<", "LT"},
}

// parseFilter parses one --filter flag:
//
//   - KEY=VALUE is EQ; KEY=in:V1,V2 (in: in any letter case) is IN on the
//     comma-separated values. Spaces around VALUE and around each IN value
//     are dropped.
//   - KEY=in:[...] (the text after in: starts with [) is IN on the values
//     of a JSON array, for values that hold commas: strings exactly as
//     JSON gives them (commas, quotes and spaces included), numbers and
//     true or false as the text they are written with, which is what
//     KEY=in:1,2 gives, so that the store reads them by the field's type
//     alike (inJSON). Text that is not such an array is a usage error,
//     which also shows how to write a value that starts with [.
//   - KEY==VALUE is EQ on VALUE exactly as written (spaces, and a prefix
//     such as in:, included).
//   - KEY!=V, KEY>V, KEY<V, KEY>=V, KEY<=V, and KEY=nin:…, any:, all:,
//     contains:, text_match:, is_empty (LlamaIndex's other operators, in
//     any letter case) are usage errors: the stores support EQ and IN only.
//
// The key is the text before the first =, <, > or != with the spaces
// around it dropped: `author = alice` filters on author. A metadata key
// that begins or ends with a space is not worth keeping, since Cloud AI
// Search field names cannot hold spaces, while a space typed around the
// = is an easy mistake whose literal reading matches nothing and says
// nothing. The same goes for the value of KEY=VALUE; KEY==VALUE keeps a
// value's spaces for the rare value that has them. An empty key is an
// error.
func parseFilter(arg string) (sink.MetadataFilter, error) {
	i := strings.IndexAny(arg, "=<>")
	if i < 0 {
		return sink.MetadataFilter{}, usagef("--filter %q: no operator; use KEY=VALUE, KEY==VALUE or KEY=in:V1,V2 (%s)", arg, filterSyntax)
	}
	if i > 0 && arg[i-1] == '!' {
		i-- // !=
	}
	key, rest := strings.TrimSpace(arg[:i]), arg[i:]
	for _, u := range unsupportedOperators {
		if strings.HasPrefix(rest, u.op) {
			return sink.MetadataFilter{}, usagef("--filter %q: operator %s (%s) is not supported; %s", arg, u.op, u.name, filterSyntax)
		}
	}
	if key == "" {
		return sink.MetadataFilter{}, usagef("--filter %q: the key is empty; use KEY=VALUE, KEY==VALUE or KEY=in:V1,V2 with the metadata key to filter on", arg)
	}
	if literal, ok := strings.CutPrefix(rest, "=="); ok {
		return sink.MetadataFilter{Key: key, Operator: sink.EQ, Value: literal}, nil
	}
	val := strings.TrimSpace(rest[1:]) // after "="
	if list, ok := cutPrefixFold(val, "in:"); ok {
		if list = strings.TrimSpace(list); strings.HasPrefix(list, "[") {
			values, err := inJSON(arg, key, list)
			if err != nil {
				return sink.MetadataFilter{}, err
			}
			return sink.MetadataFilter{Key: key, Operator: sink.IN, Value: values}, nil
		}
		values := strings.Split(list, ",")
		for i := range values {
			values[i] = strings.TrimSpace(values[i])
		}
		return sink.MetadataFilter{Key: key, Operator: sink.IN, Value: values}, nil
	}
	for _, op := range unsupportedPrefixes {
		if _, ok := cutPrefixFold(val, op+":"); ok || op == opIsEmpty && strings.EqualFold(val, op) {
			return sink.MetadataFilter{}, usagef("--filter %q: operator %s (%s) is not supported; %s; to match the value %q itself, use %s",
				arg, op, strings.ToUpper(op), filterSyntax, val, literalFilter(key, val))
		}
	}
	return sink.MetadataFilter{Key: key, Operator: sink.EQ, Value: val}, nil
}

// literalFilter writes the --filter flag that is EQ on value exactly:
// KEY==VALUE, or KEY ==VALUE when the key ends in !, which would otherwise
// read as the operator != (a!==x is a!= on "=x").
func literalFilter(key, value string) string {
	if strings.HasSuffix(key, "!") {
		return key + " ==" + value
	}
	return key + "==" + value
}

// inJSON reads the JSON array list of the --filter flag arg (KEY=in:[...],
// key being KEY) as the values of an IN filter. A string is taken as JSON
// gives it; a number, true or false as the text it is written with, as
// KEY=in:1,2 takes them (a store compares that text with a number by its
// value, and writes it as a number on a numeric Cloud AI Search field).
// Text that is not a JSON array, an empty array and a null, object or
// array inside it are usage errors that name the flag and show the form.
func inJSON(arg, key, list string) ([]string, error) {
	example := key + `=in:["Smith, J",42]`
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(list), &raw); err != nil {
		at := ""
		if serr, ok := errors.AsType[*json.SyntaxError](err); ok {
			at = fmt.Sprintf(" at byte %d", serr.Offset)
		}
		return nil, usagef("--filter %q: the IN list %s is not a JSON array (%v%s); write the values as a JSON array of strings and numbers, "+
			"such as --filter '%s' (in single quotes for the shell), or as comma-separated values (%s=in:a,b), "+
			"where a value that starts with [ is taken for the start of an array: write it as a JSON string (%s=in:[\"[draft]\",\"final\"])",
			arg, list, err, at, example, key, key)
	}
	if len(raw) == 0 {
		return nil, usagef("--filter %q: the IN list is empty, and would match nothing; give at least one value, such as %s", arg, example)
	}
	values := make([]string, len(raw))
	for i, r := range raw {
		var kind string
		switch r[0] {
		case '"':
			if err := json.Unmarshal(r, &values[i]); err != nil {
				return nil, fmt.Errorf("--filter %q: value %d of the IN list: %w", arg, i+1, err) // valid JSON: not reached
			}
			continue
		case 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			values[i] = string(r)
			continue
		case 'n':
			kind = "null"
		case '{':
			kind = "an object, " + string(r)
		case '[':
			kind = "an array, " + string(r)
		default: // valid JSON: not reached
			kind = string(r)
		}
		return nil, usagef("--filter %q: value %d of the IN list is %s; an IN list holds strings and numbers only, such as %s "+
			"(each is compared with the metadata value, or with each element of a list)", arg, i+1, kind, example)
	}
	return values, nil
}

// cutPrefixFold is strings.CutPrefix with prefix matched in any letter case.
func cutPrefixFold(s, prefix string) (after string, found bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// resultLine is one line of `query --json` and `get --json`.
type resultLine struct {
	ID       string         `json:"id"`
	DocID    string         `json:"doc_id"`
	Score    float64        `json:"score"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata"`
	// RerankerScore is set by semantic_hybrid queries.
	RerankerScore *float64 `json:"reranker_score,omitempty"`
	// Unranked marks a node that get listed rather than a query ranked:
	// the text output shows no score for it (the JSON keeps score 0, as
	// DESIGN.md's line shape has it).
	Unranked bool `json:"-"`
}

func (a *app) queryCommand() *cobra.Command {
	var (
		mode    string
		topK    int
		asJSON  bool
		filters filterFlags
	)
	cmd := &cobra.Command{
		Use:   "query TEXT",
		Short: "Search the vector store",
		Long: "Search the vector store. Modes: vector (embedding similarity, default), hybrid (vector and\n" +
			"full-text fused by reciprocal rank), semantic_hybrid (hybrid then semantic reranking; Cloud AI\n" +
			"Search only) and sparse (full-text BM25 only).",
		Args: queryText,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			m, err := sink.ParseQueryMode(mode)
			if err != nil {
				return &usageError{fmt.Errorf("--mode: %w", err)}
			}
			mf, err := filters.parse()
			if err != nil {
				return err
			}
			if topK < 1 {
				return usagef("--top-k is %d; it must be at least 1", topK)
			}
			if strings.TrimSpace(args[0]) == "" {
				// Embedded, it would match arbitrary nodes with score 0.
				return usagef("the query text is empty; give the words to search for")
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if cfg.Sink.Type != sinkCloudSearch {
				// Said before the store is opened: even a local store yet
				// to be built could not answer it.
				if err := local.CheckMode(m); err != nil {
					return err
				}
			} else if m == sink.SemanticHybrid && topK > cloudsearch.MaxSemanticResults {
				// CheckQuery says so too, in the library's terms (topK,
				// mode); this names the flags the user gave.
				return usagef("--top-k is %d, but --mode semantic_hybrid returns at most %d results (the service's semantic ranker reranks the top %d); ask for %d or fewer, or use --mode hybrid",
					topK, cloudsearch.MaxSemanticResults, cloudsearch.MaxSemanticResults, cloudsearch.MaxSemanticResults)
			} else if err := cfg.Sink.CloudSearch.CheckQuery(m, topK); err != nil {
				return err // before the query is embedded
			}
			return a.withStore(ctx, cfg, a.openStoreToRead, func(store sink.VectorStore) error {
				q := sink.Query{Mode: m, QueryStr: args[0], TopK: topK, Filters: mf}
				if m.NeedsEmbedding() {
					// As run does: vectors of another length than the
					// stored ones are a configuration error (exit 2)
					// that names the settings and the fix, said before
					// anything is embedded, rather than the store's
					// refusal (a Cloud AI Search index answers 400).
					if err := a.checkDimensions(ctx, cfg, store); err != nil {
						return err
					}
					if err := a.checkQueryEmbedder(ctx, cfg); err != nil {
						return err
					}
					emb, err := a.openEmbedder(ctx, cfg)
					if err != nil {
						return err
					}
					vecs, err := emb.Embed(ctx, embedder.Texts(args[0]))
					if err != nil {
						return fmt.Errorf("embedding the query: %w", err)
					}
					q.Embedding = vecs[0]
				}
				a.log.Debug("query", "mode", m, "top_k", topK, "filters", len(filters.values))
				res, err := store.Query(ctx, q)
				if err != nil {
					return err
				}
				for i, r := range res {
					line := resultLine{ID: r.ID, DocID: r.RefDocID, Score: r.Score, Text: r.Text, Metadata: r.Metadata, RerankerScore: r.RerankerScore}
					if err := printResult(a.stdout, asJSON, i+1, line); err != nil {
						return err
					}
				}
				if len(res) == 0 {
					if !asJSON {
						fmt.Fprintln(a.stdout, "no results")
					}
					a.hintDocIDFilter(mf)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "vector", "query `MODE`: vector (LlamaIndex's default), hybrid, semantic_hybrid or sparse")
	cmd.Flags().IntVar(&topK, "top-k", 5, "return the `N` best results")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per result")
	filters.register(cmd)
	return cmd
}

func (a *app) getCommand() *cobra.Command {
	var (
		ids     string
		docID   string
		limit   int
		asJSON  bool
		filters filterFlags
	)
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List stored nodes (getNodes), by id, document, filter and limit",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			mf, err := filters.parse()
			if err != nil {
				return err
			}
			if limit < 0 {
				return usagef("--limit is %d; use 0 (no limit) or more", limit)
			}
			if cmd.Flags().Changed("doc-id") && docID == "" {
				return usagef("--doc-id is empty: give the document id, i.e. its path relative to the ingested folder")
			}
			var idList []string
			if cmd.Flags().Changed("ids") {
				for _, id := range strings.Split(ids, ",") {
					if id = strings.TrimSpace(id); id != "" {
						idList = append(idList, id)
					}
				}
				if len(idList) == 0 { // an empty $IDS must not list the whole index
					return usagef("--ids is empty: give comma-separated node ids (`query --json` and `get --json` print them)")
				}
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			return a.withStore(ctx, cfg, a.openStoreToRead, func(store sink.VectorStore) error {
				g := getter{store: store, filters: mf, limit: limit, print: func(rank int, n sink.Node) error {
					return printResult(a.stdout, asJSON, rank, resultLine{ID: n.ID, DocID: n.RefDocID, Text: n.Text, Metadata: n.Metadata, Unranked: true})
				}}
				switch {
				case docID != "":
					err = g.document(ctx, docID, idList)
				case len(idList) == 0:
					err = g.all(ctx)
				default:
					err = g.get(ctx, idList)
				}
				if err != nil {
					return err
				}
				if !asJSON {
					fmt.Fprintln(a.stdout, plural(g.printed, "node", "nodes"))
				}
				if g.printed == 0 {
					a.hintDocIDFilter(mf)
					if len(idList) > 0 {
						fmt.Fprintln(a.stderr, "hint: --ids takes whole node ids; the text output of query and get shortens them to 12 characters, --json prints them whole")
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&ids, "ids", "", "comma-separated node `IDS`")
	cmd.Flags().StringVar(&docID, "doc-id", "", "only the nodes of the document `REF_DOC_ID` (its path relative to the ingested folder, as `delete --doc-id` takes)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most `N` nodes (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per node")
	filters.register(cmd)
	return cmd
}

// getter prints the nodes that get selects, counting them.
type getter struct {
	store   sink.VectorStore
	filters *sink.MetadataFilters
	limit   int // 0: all
	print   func(rank int, n sink.Node) error
	printed int
}

// get prints the nodes of ids (all nodes when ids is empty) that match
// the filters.
func (g *getter) get(ctx context.Context, ids []string) error {
	nodes, err := g.store.GetNodes(ctx, ids, g.filters, g.remaining())
	if err != nil {
		return err
	}
	return g.printAll(nodes)
}

// printAll prints nodes, counting them.
func (g *getter) printAll(nodes []sink.Node) error {
	for _, n := range nodes {
		if err := g.print(g.printed+1, n); err != nil {
			return err
		}
		g.printed++
	}
	return nil
}

func (g *getter) remaining() int {
	if g.limit == 0 {
		return 0
	}
	return g.limit - g.printed
}

// all prints every node that matches the filters, a page of the store's
// listing at a time (pipeline.NodeScanner), so that an index of any size is
// never held whole. A store whose listing is unsupported before anything
// was printed, or that cannot list its nodes, has its nodes read as
// GetNodes(nil, filters, limit) reads them, the seed's
// getNodes(undefined, filters, limit): a page at a time when it is a
// sink.NodePager, else at once. A Cloud AI Search index whose doc_id field
// is hidden (hiddenFieldKeys) is one: it cannot be listed with its
// documents' ids, but its PageNodes reads its nodes a page at a time, in
// the order the listing prints them (key order, when the key is
// sortable).
func (g *getter) all(ctx context.Context) error {
	if scanner, ok := g.store.(pipeline.NodeScanner); ok {
		err := scanner.ScanNodes(ctx, func(refs []sink.NodeRef) error {
			ids := make([]string, len(refs))
			for i, r := range refs {
				ids[i] = r.ID
			}
			return g.page(ctx, ids)
		})
		if !errors.Is(err, sink.ErrUnsupported) || g.printed > 0 {
			return listed(err)
		}
	}
	if pager, ok := g.store.(sink.NodePager); ok {
		return listed(pager.PageNodes(ctx, g.filters, g.remaining(), func(nodes []sink.Node) error {
			if err := g.printAll(nodes); err != nil {
				return err
			}
			return g.limitReached()
		}))
	}
	return g.get(ctx, nil)
}

// page prints the nodes of one page of a listing, ids, and returns
// errLimitReached once --limit nodes are printed, which ends the listing.
func (g *getter) page(ctx context.Context, ids []string) error {
	if err := g.get(ctx, ids); err != nil {
		return err
	}
	return g.limitReached()
}

// limitReached returns errLimitReached once --limit nodes are printed.
func (g *getter) limitReached() error {
	if g.limit > 0 && g.printed >= g.limit {
		return errLimitReached
	}
	return nil
}

// errLimitReached ends a listing once --limit nodes are printed.
var errLimitReached = errors.New("limit reached")

// listed returns the error of a listing that page may have ended: nil for
// errLimitReached.
func listed(err error) error {
	if errors.Is(err, errLimitReached) {
		return nil
	}
	return err
}

// document prints the nodes of one document, page by page as the store
// lists them, so that a document of any size is never held whole; with
// ids, only those of them that belong to it.
func (g *getter) document(ctx context.Context, docID string, ids []string) error {
	lister, ok := g.store.(pipeline.NodeLister)
	if !ok {
		return usagef("--doc-id: this store cannot list a document's nodes; use --filter file_path=… instead")
	}
	var only map[string]bool
	if len(ids) > 0 {
		only = make(map[string]bool, len(ids))
		for _, id := range ids {
			only[id] = true
		}
	}
	err := lister.NodeIDs(ctx, docID, func(page []string) error {
		if only != nil {
			page = slices.DeleteFunc(slices.Clone(page), func(id string) bool { return !only[id] })
			if len(page) == 0 {
				return nil
			}
		}
		return g.page(ctx, page)
	})
	return listed(err)
}

// hintDocIDFilter explains, after a filtered listing or search found
// nothing, that doc_id is not a metadata key.
func (a *app) hintDocIDFilter(mf *sink.MetadataFilters) {
	if mf == nil {
		return
	}
	for _, f := range mf.Filters {
		if f.Key == "doc_id" {
			fmt.Fprintln(a.stderr, "sluice: --filter doc_id matches metadata named doc_id, which Sluice's nodes do not carry: "+
				"the document id is a field of its own; list a document's nodes with `sluice get --doc-id ID`, or filter on file_path")
			return
		}
	}
}

func (a *app) deleteCommand() *cobra.Command {
	var docID string
	cmd := &cobra.Command{
		Use:   "delete --doc-id REF_DOC_ID",
		Short: "Delete every node of a document (delete(refDocId))",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if docID == "" {
				return usagef("--doc-id is required: the document id, i.e. its path relative to the ingested folder")
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			return a.withStore(ctx, cfg, a.openStore, func(store sink.VectorStore) error {
				// The manifest first, for writing: while another process
				// writes the index, nothing is deleted (state.ErrLocked).
				st, err := state.OpenForWriting(ctx, cfg.State.Path, sinkScope(cfg))
				if err != nil {
					return err
				}
				defer st.Close()
				// Delete its nodes, then forget it in the manifest, so that the
				// next run ingests the document again if its file is still there.
				known, err := st.Has(ctx, docID)
				if err != nil {
					return err
				}
				if err := pipeline.RemoveDocument(ctx, store, st, docID); err != nil {
					return err
				}
				if !known {
					fmt.Fprintf(a.stdout, "document %s is not in the manifest (check --doc-id: a path relative to the ingested folder, as `sluice get` shows); deleted any nodes the index held for it\n", strconv.Quote(docID))
					return nil
				}
				fmt.Fprintf(a.stdout, "deleted the nodes of document %s\n", strconv.Quote(docID))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&docID, "doc-id", "", "the reference document id `REF_DOC_ID` whose nodes to delete: the file's path relative to the ingested folder, as `get` shows it")
	return cmd
}

// printResult prints one query or get result, as JSON or readable text.
func printResult(w io.Writer, asJSON bool, rank int, r resultLine) error {
	if asJSON {
		if r.Metadata == nil {
			r.Metadata = map[string]any{}
		}
		return json.NewEncoder(w).Encode(r)
	}
	text := []rune(previewText(r.Text))
	if len(text) > 200 {
		text = append(text[:200], '…')
	}
	// semantic_hybrid ranks by the reranker's score: show it first.
	var score string
	switch {
	case r.Unranked:
	case r.RerankerScore != nil:
		score = fmt.Sprintf("reranker_score=%.4f  score=%.4f  ", *r.RerankerScore, r.Score)
	default:
		score = fmt.Sprintf("score=%.4f  ", r.Score)
	}
	_, err := fmt.Fprintf(w, "%2d. %s  %sid=%s\n    %s\n", rank, reader.Printable(r.DocID), score, r.ID[:min(12, len(r.ID))], string(text))
	return err
}

// previewText is a chunk's text as the text output shows it, on one line:
// runs of white space become one space, and the characters a terminal
// would act on rather than show (control characters such as an escape
// sequence's ESC, bidirectional formatting characters that reorder the
// line: see reader.Unprintable) become U+FFFD, so that a document's text
// can neither recolour, retitle or move the terminal nor disguise the
// line. --json gives the text as it is.
func previewText(s string) string {
	return strings.Map(func(r rune) rune {
		if reader.Unprintable(r) {
			return utf8.RuneError
		}
		return r
	}, strings.Join(strings.Fields(s), " "))
}

// queryText checks query's one TEXT argument, saying to quote a text of
// several words, which the shell splits.
func queryText(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("query needs the TEXT to search for: sluice query \"how are chunks embedded\"")
	case len(args) > 1:
		return usagef("query takes one TEXT, got %d words: quote a text of several words, as in sluice query %q", len(args), strings.Join(args, " "))
	}
	return nil
}
