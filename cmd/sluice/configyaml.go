package main

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"gopkg.in/yaml.v3"
)

// decodeConfig decodes the YAML document of data into cfg, strictly (a
// second document is an error):
// unknown keys and values of the wrong kind are errors that name the
// setting and its line. yaml.v3 alone would silently truncate a decimal in
// a whole-number setting (chunkSize: 100.9 becomes 100), so every value is
// first checked against the kind of its setting (checkKinds); what yaml.v3
// still refuses is reworded by friendlyYAMLError. The watch settings the
// file writes then take the meaning the flags give them (settleWatch:
// debounce 0s is off, not the default). A file without a document (empty,
// or only comments) keeps every default.
func decodeConfig(data []byte, cfg *Config) error {
	var doc yaml.Node
	first := yaml.NewDecoder(bytes.NewReader(data))
	if err := first.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err // a syntax error, with its line
	}
	// The settings are one document: what follows a second "---" would be
	// ignored silently.
	for {
		var next yaml.Node
		err := first.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err // a syntax error in what follows, with its line
		}
		if len(next.Content) > 0 && next.Content[0].Kind != 0 && !isNull(next.Content[0]) {
			return fmt.Errorf("line %d: a second YAML document (after a --- line); the configuration is one document: merge them, or remove the --- line", next.Content[0].Line)
		}
	}
	if err := checkKinds(&doc); err != nil {
		return err
	}
	// Node.Decode has no KnownFields, so the text is decoded again.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return friendlyYAMLError(err, &doc)
	}
	return settleWatch(&doc, &cfg.Watch)
}

// setting is one value of a configuration file.
type setting struct {
	// name is the dotted name Validate uses, such as splitter.chunkSize or
	// source.include[2]; "" for the whole document.
	name string
	// node is the value, aliases resolved.
	node *yaml.Node
	// typ is the Go type the value decodes into; nil where it is unknown
	// (an unknown key, free-form metadata, below a type that decodes
	// itself).
	typ reflect.Type
}

// configType is the type a whole configuration file decodes into.
var configType = reflect.TypeFor[Config]()

// maxSettingDepth bounds the walk, as a guard against aliases that refer
// to an enclosing node.
const maxSettingDepth = 32

// walkSettings calls visit for every value of the document doc, parents
// before children, with the name and type of its setting. It is the one
// place that maps a YAML node to the name of its setting.
func walkSettings(doc *yaml.Node, visit func(setting)) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return
		}
		root = root.Content[0]
	}
	walkSetting(setting{node: root, typ: configType}, 0, visit)
}

func walkSetting(s setting, depth int, visit func(setting)) {
	if depth > maxSettingDepth {
		return
	}
	s.node = unalias(s.node)
	visit(s)
	t := s.typ
	if t != nil && decodesItself(t) {
		t = nil
	}
	switch s.node.Kind {
	case yaml.MappingNode:
		walkPairs(s.name, s.node, t, depth, visit)
	case yaml.SequenceNode:
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i, c := range s.node.Content {
			walkSetting(setting{name: s.name + "[" + strconv.Itoa(i) + "]", node: c, typ: elem}, depth+1, visit)
		}
	}
}

// walkPairs walks the keys of the mapping m, which holds the settings of
// type t named under prefix. A merge key (<<: *base) contributes the keys
// of the mappings it names.
func walkPairs(prefix string, m *yaml.Node, t reflect.Type, depth int, visit func(setting)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		if key.ShortTag() == "!!merge" {
			val = unalias(val)
			merged := []*yaml.Node{val}
			if val.Kind == yaml.SequenceNode {
				merged = val.Content
			}
			for _, mm := range merged {
				if mm = unalias(mm); mm.Kind == yaml.MappingNode && depth < maxSettingDepth {
					walkPairs(prefix, mm, t, depth+1, visit)
				}
			}
			continue
		}
		name := key.Value
		if prefix != "" {
			name = prefix + "." + name
		}
		walkSetting(setting{name: name, node: val, typ: fieldType(t, key.Value)}, depth+1, visit)
	}
}

func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxSettingDepth; i++ {
		n = n.Alias
	}
	return n
}

// fieldType returns the type of the value under key in a mapping decoded
// into t (a struct, by yaml tag as yaml.v3 matches them, or a map), or nil.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t == nil {
		return nil
	}
	t = derefType(t)
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, inline, ok := yamlKey(f)
			switch {
			case !ok:
			case inline:
				if ft := fieldType(f.Type, key); ft != nil {
					return ft
				}
			case name == key:
				return f.Type
			}
		}
	}
	return nil
}

// yamlKey returns the key yaml.v3 matches to the struct field f, or
// whether f is inlined (its fields' keys are those of the enclosing
// mapping); ok is false for a field yaml.v3 skips.
func yamlKey(f reflect.StructField) (key string, inline, ok bool) {
	name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch {
	case !f.IsExported() || name == "-":
		return "", false, false
	case strings.Contains(","+opts+",", ",inline,"):
		return "", true, true
	case name == "":
		return strings.ToLower(f.Name), false, true
	}
	return name, false, true
}

// derefType is t with its pointers followed.
func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// decodesItself reports whether values of t are decoded by t's own method,
// which then owns their checks and their errors.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(yamlUnmarshaler) || pt.Implements(yamlUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// settingError is a value of the wrong kind for its setting.
type settingError struct {
	Line    int
	Setting string // dotted name; "" for the whole file
	Value   string // the value as the user wrote it (quoted if a string), or "a list", "a mapping"
	Problem string // what is wrong, in the user's words: "not a whole number", "too large (at most ...)"
	Hint    string // how to fix it, if more than Problem says
}

func (e *settingError) Error() string {
	name := e.Setting
	if name == "" {
		name = "the configuration"
	}
	s := fmt.Sprintf("line %d: %s is %s, which is %s", e.Line, name, e.Value, e.Problem)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// settingErrors lists every value of the wrong kind in a file.
type settingErrors []*settingError

func (e settingErrors) Error() string {
	msgs := make([]string, len(e))
	for i, se := range e {
		msgs[i] = se.Error()
	}
	return strings.Join(msgs, "; ")
}

// checkKinds checks every value of the document whose setting is known
// against the kind of that setting: a mapping for a section, a list for a
// list, a single value for the others, and for whole-number settings an
// integer that fits (yaml.v3 would truncate 100.9 to 100, or decode
// 99999999999999999999 with an error naming a Go type).
func checkKinds(doc *yaml.Node) error {
	var errs settingErrors
	walkSettings(doc, func(s setting) {
		if err := checkKind(s); err != nil {
			errs = append(errs, err)
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func checkKind(s setting) *settingError {
	t, n := s.typ, s.node
	if t == nil || decodesItself(t) || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil // unknown, checked by its own type, or null (left to yaml.v3: a single value keeps its default)
	}
	t = derefType(t)
	bad := func(hint string) *settingError {
		return &settingError{Line: n.Line, Setting: s.name, Value: describeValue(n), Problem: "not " + kindWords(t), Hint: hint}
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			if s.name == "" {
				return bad("write sections such as source: and splitter: (see configs/local.yaml)")
			}
			return bad("")
		}
		return nil
	case reflect.Slice, reflect.Array:
		switch {
		case n.Kind == yaml.ScalarNode:
			return bad(listHint(s))
		case n.Kind != yaml.SequenceNode:
			return bad("")
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return bad("")
	}
	if isWholeNumber(t) {
		return checkWholeNumber(s, t)
	}
	if t == durationType {
		return checkDuration(s)
	}
	if k := t.Kind(); (k == reflect.Float32 || k == reflect.Float64) && overflows(n) != 0 {
		return &settingError{Line: n.Line, Setting: s.name, Value: describeValue(n), Problem: float64RangeWords}
	}
	return nil // yaml.v3 checks the other scalars (a string, true or false, a duration)
}

// listHint shows a single value given for a list setting written as a
// list of that one value, as the setting's key and a flow sequence
// (include: ["*.md"]).
func listHint(s setting) string {
	key := s.name[strings.LastIndexByte(s.name, '.')+1:]
	v := s.node.Value
	if s.node.ShortTag() == "!!str" {
		v = strconv.Quote(v)
	}
	return fmt.Sprintf("write a list, even of one value: %s: [%s]", key, v)
}

// checkDuration refuses a bare number for a duration setting, saying what
// it would be as milliseconds: the seed's clients take timeout as a number
// of milliseconds (timeout: 60000), Sluice takes a duration with a unit.
// Only embedder.timeout's message cites the seed; the other settings have
// no unit of the seed's to point to. A
// number in quotes ("60000") is caught too; other strings are left to
// yaml.v3 (time.ParseDuration).
func checkDuration(s setting) *settingError {
	n := s.node
	var ms float64
	switch n.ShortTag() {
	case "!!int", "!!float":
		if err := n.Decode(&ms); err != nil {
			ms = math.NaN()
		}
	case "!!str":
		if _, err := time.ParseDuration(n.Value); err == nil {
			return nil // a duration, such as "0" or "60s"
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil
		}
		ms = f
	default:
		return nil
	}
	problem := "not " + kindWords(durationType) + " (a bare number is not a duration"
	if !math.IsNaN(ms) && math.Abs(ms) < float64(math.MaxInt64/int64(time.Millisecond)) {
		if s.name == "embedder.timeout" {
			problem += fmt.Sprintf(": read as milliseconds, the seed's unit for timeout, %s is %s", n.Value, millisecondsWords(ms))
		} else {
			problem += fmt.Sprintf("; if it means milliseconds, write %s", millisecondsWords(ms))
		}
	}
	return &settingError{Line: n.Line, Setting: s.name, Value: describeValue(n), Problem: problem + ")"}
}

// millisecondsWords writes ms milliseconds as a duration setting takes it:
// whole seconds as 60s, others as time.Duration prints them (1.5s, 250ms).
func millisecondsWords(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

func isWholeNumber(t reflect.Type) bool {
	if t == durationType {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// checkWholeNumber checks that the scalar of s is an integer that fits t.
func checkWholeNumber(s setting, t reflect.Type) *settingError {
	n := s.node
	bad := func(problem string) *settingError {
		return &settingError{Line: n.Line, Setting: s.name, Value: describeValue(n), Problem: problem}
	}
	lo, hi := rangeOf(t)
	var v *big.Int
	switch n.ShortTag() {
	case "!!int": // decimal, 0x, 0o, 017, 1_000: as yaml.v3 reads them
		var i int64
		var u uint64
		switch {
		case n.Decode(&i) == nil:
			v = big.NewInt(i)
		case n.Decode(&u) == nil:
			v = new(big.Int).SetUint64(u)
		default: // an explicit !!int on something else
			return bad("not " + wholeNumberWords)
		}
	case "!!float":
		if i, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 10); ok {
			v = i // digits only: an integer beyond 64 bits, such as 99999999999999999999
			break
		}
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
			return bad("not " + wholeNumberWords)
		}
		if v, _ = big.NewFloat(f).Int(nil); v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 {
			// 1e3 or 100.0: a whole number written as a decimal
			return bad("not " + wholeNumberWords + "; write it as " + v.String())
		}
	default:
		switch overflows(n) {
		case +1:
			v = new(big.Int).Add(hi, big.NewInt(1))
		case -1:
			v = new(big.Int).Sub(lo, big.NewInt(1))
		default:
			return bad("not " + wholeNumberWords)
		}
	}
	switch {
	case v.Cmp(hi) > 0:
		return bad("too large (at most " + hi.String() + ")")
	case v.Cmp(lo) < 0:
		return bad("too small (at least " + lo.String() + ")")
	}
	return nil
}

// overflows tells whether n is a number written without quotes that is
// beyond float64's range, such as 1e400 (+1) or -1e400 (-1): yaml.v3 reads
// those as strings. It returns 0 for anything else.
func overflows(n *yaml.Node) int {
	if n.ShortTag() != "!!str" || n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return 0
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if !errors.Is(err, strconv.ErrRange) || !math.IsInf(f, 0) {
		return 0
	}
	if f < 0 {
		return -1
	}
	return +1
}

// rangeOf returns the smallest and the largest value of an integer type.
func rangeOf(t reflect.Type) (lo, hi *big.Int) {
	bits := uint(t.Bits())
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		hi = new(big.Int).Lsh(big.NewInt(1), bits)
		return big.NewInt(0), hi.Sub(hi, big.NewInt(1))
	}
	hi = new(big.Int).Lsh(big.NewInt(1), bits-1)
	lo = new(big.Int).Neg(hi)
	return lo, hi.Sub(hi, big.NewInt(1))
}

// describeValue shows a value as the user wrote it: a number or a word as
// is (also one beyond float64's range), a string quoted, a list or a mapping by its kind; long values are
// cut short.
func describeValue(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	v := n.Value
	if utf8.RuneCountInString(v) > 40 {
		v = string([]rune(v)[:37]) + "..."
	}
	if n.ShortTag() == "!!str" && overflows(n) == 0 {
		return strconv.Quote(v)
	}
	return v
}

// What a value of each kind is, in the user's words: the errors of the
// config file and of the command line's flags share these phrases.
const (
	wholeNumberWords  = "a whole number"
	numberWords       = "a number"
	boolWords         = "true or false"
	durationWords     = "a duration such as 500ms, 60s or 2m"
	float64RangeWords = "beyond the range of numbers (about ±1.8e308)"
)

// kindWords describes what a setting of type t takes, in the user's words,
// never with a Go type name.
func kindWords(t reflect.Type) string {
	if t == durationType {
		return durationWords
	}
	switch t.Kind() {
	case reflect.Pointer:
		return kindWords(t.Elem())
	case reflect.Bool:
		return boolWords
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return numberWords
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		switch e := t.Elem(); {
		case e.Kind() == reflect.String:
			return "a list of strings"
		case isWholeNumber(e):
			return "a list of whole numbers"
		case e.Kind() == reflect.Struct || e.Kind() == reflect.Map:
			return "a list of mappings"
		}
		return "a list"
	}
	if isWholeNumber(t) {
		return wholeNumberWords
	}
	return "a valid value"
}

var (
	unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type (\S+)`)
	// yaml.v3 quotes the value only for scalars, and cuts it to seven
	// characters and "..." when it is longer than ten.
	badValue = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
)

// friendlyYAMLError turns yaml.v3's Go-type wording into setting names:
// an unknown key names its section, a value of the wrong type names its
// setting (found in doc by line, value and type) and what it takes.
func friendlyYAMLError(err error, doc *yaml.Node) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if g := unknownField.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			m = unknownSettingMessage(doc, line, g[2], g[3])
		} else if g := badValue.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			if s, ok := settingAt(doc, line, g[2], g[3], g[4]); ok {
				want := typeWords(g[4])
				if s.typ != nil {
					want = kindWords(s.typ)
				}
				m = (&settingError{Line: line, Setting: s.name, Value: describeValue(s.node), Problem: "not " + want}).Error()
			} else {
				m = fmt.Sprintf("line %s: a value is %s, which is not %s", g[1], tagWords(g[2], g[3]), typeWords(g[4]))
			}
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownSettingMessage describes the unknown key on the given line of doc,
// in the section whose Go type yaml.v3 named goType: it suggests the
// setting the key most likely meant (see suggestSetting) and names the
// example configuration that shows the section (see exampleFor).
func unknownSettingMessage(doc *yaml.Node, line int, key, goType string) string {
	m := fmt.Sprintf("line %d: unknown setting %q (in section %s)", line, key, sectionOf(goType))
	section, typ, found := sectionOfKey(doc, line, key, goType)
	example := exampleFor(section)
	if !found {
		example = exampleFor(sectionOf(goType))
	}
	if want, note := suggestSetting(section, typ, key); want != "" {
		m += "; did you mean " + want + "?"
		if note != "" {
			m += " " + note
		}
		return m + " (see " + example + ")"
	}
	return m + "; check its spelling against " + example
}

// sectionOfKey finds the mapping of doc that holds key on the given line
// and returns its setting name ("" for the top level) and Go type. Of
// several such mappings (flow style puts sections on one line), the one
// of the Go type yaml.v3 named (goType, such as cloudsearch.Config) is
// taken, else the first. A key brought in by a merge key (<<: *base) is
// not found.
func sectionOfKey(doc *yaml.Node, line int, key, goType string) (name string, typ reflect.Type, found bool) {
	exact := false
	walkSettings(doc, func(s setting) {
		if exact || s.node.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(s.node.Content); i += 2 {
			if k := s.node.Content[i]; k.Line == line && k.Value == key {
				if s.typ != nil {
					exact = derefType(s.typ).String() == goType
				}
				if exact || !found {
					name, typ, found = s.name, s.typ, true
				}
				return
			}
		}
	})
	return name, typ, found
}

// exampleFiles names the example configuration that shows a section, for
// sections not in configs/local.yaml; a section's subsections go with it.
var exampleFiles = map[string]string{
	"sink.cloudsearch": "configs/cloudsearch.yaml",
}

// exampleFor returns the example configuration that shows section (a
// dotted setting name such as sink.cloudsearch).
func exampleFor(section string) string {
	for s, file := range exampleFiles {
		if section == s || strings.HasPrefix(section, s+".") {
			return file
		}
	}
	return "configs/local.yaml"
}

// settingAlias is a setting's name as LlamaIndex (TypeScript or Python)
// spells it where Sluice's name differs, beyond letter case and
// underscores (which suggestSetting ignores anyway).
type settingAlias struct {
	setting string // Sluice's name
	note    string // what differs, if more than the name
}

// settingAliases maps, by section, the folded form (see foldKey) of a
// LlamaIndex option name to the Sluice setting. The files take one
// spelling per setting: an alias is only ever suggested, never accepted.
var settingAliases = map[string]map[string]settingAlias{
	"sink.cloudsearch": {
		"serviceapiversion":         {setting: "apiVersion"},            // LlamaIndex.TS AzureAISearchVectorStore
		"semanticconfigurationname": {setting: "semanticConfiguration"}, // Python semantic_configuration_name
		"apikey": {setting: "keyEnv", // the seed's client option apiKey; LlamaIndex's store calls it key
			note: "It names the environment variable holding the admin key (CLOUD_AI_SEARCH_KEY by default): keys do not belong in configuration files."},
		"url": {setting: "endpoint"}, // the seed's client option url, of other vector stores
	},
	"embedder": {
		"embedbatchsize": {setting: "batchSize"}, // LlamaIndex embedBatchSize, embed_batch_size
		"apikey": {setting: "apiKeyEnv", // the seed's client option apiKey
			note: "It names the environment variable holding the key: keys do not belong in configuration files."},
		"url": {setting: "baseURL"}, // the seed's client option url
		"embedmodel": {setting: "model", // the seed's Settings.embedModel
			note: "LlamaIndex's Settings.embedModel is this whole section: provider chooses the client (hash, openai, azure-openai) and model names the model."},
	},
	"source": {
		"directorypath": {setting: "dir"}, // the seed's loadDataAsyncIterator({directoryPath})
		"inputdir":      {setting: "dir"}, // Python SimpleDirectoryReader input_dir
	},
}

// suggestSetting returns the setting of the section (a dotted name, of Go
// type typ) that key most likely means: a LlamaIndex alias from
// settingAliases, a setting spelled the same but for letter case and
// underscores (index_name for indexName, as in LlamaIndex for Python), or
// else the one setting nearest to it in spelling (dimension for
// dimensions, pth for path; see nearestSetting).
func suggestSetting(section string, typ reflect.Type, key string) (setting, note string) {
	folded := foldKey(key)
	if a, ok := settingAliases[section][folded]; ok {
		return a.setting, a.note
	}
	keys := settingKeys(typ)
	for _, k := range keys {
		if foldKey(k) == folded {
			return k, ""
		}
	}
	return nearestSetting(keys, folded), ""
}

// nearestSetting returns the key whose folded form is nearest to folded
// by edit distance, if it is near enough to be a slip (at most 2 edits,
// and fewer than a third of the key's letters for short keys) and no other
// key is as near; "" otherwise.
func nearestSetting(keys []string, folded string) string {
	limit := min(2, (utf8.RuneCountInString(folded)+1)/3)
	best, bestDist, tie := "", limit+1, false
	for _, k := range keys {
		switch d := levenshtein.ComputeDistance(foldKey(k), folded); {
		case d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist:
			tie = true
		}
	}
	if best == "" || tie {
		return ""
	}
	return best
}

// foldKey is key lower-cased, without underscores or dashes.
func foldKey(key string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
}

// settingKeys lists the keys a mapping decoded into t takes: the yaml
// names of a struct's fields (see yamlKey), as fieldType matches them;
// none for other types.
func settingKeys(t reflect.Type) []string {
	if t == nil {
		return nil
	}
	if t = derefType(t); t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		switch {
		case !ok:
		case inline:
			keys = append(keys, settingKeys(f.Type)...)
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// settingAt finds the setting of a value yaml.v3 refused: on the given
// line, of the given tag (int, seq, map, ...), with the given value as
// yaml.v3 quotes it (possibly cut short; empty for a list or a mapping),
// preferring the one whose Go type is goType, then the deepest.
func settingAt(doc *yaml.Node, line int, tag, value, goType string) (setting, bool) {
	var found setting
	score := -1
	walkSettings(doc, func(s setting) {
		n := s.node
		if n.Line != line || !tagMatches(n, tag, value) {
			return
		}
		sc := 0
		if s.typ != nil && s.typ.String() == goType {
			sc = 1
		}
		if sc >= score { // later in the walk is deeper on the same line
			found, score = s, sc
		}
	})
	return found, score >= 0
}

func tagMatches(n *yaml.Node, tag, value string) bool {
	switch tag {
	case "seq":
		return n.Kind == yaml.SequenceNode
	case "map":
		return n.Kind == yaml.MappingNode
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!"+tag {
		return false
	}
	if cut, ok := strings.CutSuffix(value, "..."); ok && len(value) == 10 && len(n.Value) > 10 {
		return strings.HasPrefix(n.Value, cut)
	}
	return n.Value == value
}

// tagWords describes a value by its YAML tag, for when its setting is not found.
func tagWords(tag, value string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "str":
		return strconv.Quote(value)
	}
	return value
}

// typeWords describes a Go type named in a yaml.v3 error, for when the
// setting's type is not known: never the Go name itself.
func typeWords(goType string) string {
	switch goType {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return wholeNumberWords
	case "float32", "float64":
		return numberWords
	case "bool":
		return boolWords
	case "time.Duration":
		return durationWords
	case "string":
		return "a string"
	case "[]string":
		return "a list of strings"
	}
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.HasSuffix(goType, "Config"):
		return "a mapping"
	}
	return "a valid value for this setting"
}

func sectionOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "reader."):
		return "source"
	case strings.HasPrefix(goType, "splitter."):
		return "splitter"
	case strings.HasPrefix(goType, "embedder."):
		return "embedder"
	case strings.HasPrefix(goType, "local."):
		return "sink.local"
	case strings.HasPrefix(goType, "cloudsearch."):
		return "sink.cloudsearch"
	case goType == "main.SinkConfig":
		return "sink"
	case goType == "main.StateConfig":
		return "state"
	case goType == "main.PipelineConfig":
		return "pipeline"
	case strings.HasPrefix(goType, "watch."):
		return "watch"
	}
	return "top level"
}

// isNull reports whether n is an empty or null value, such as the empty
// document a trailing "---" starts.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
