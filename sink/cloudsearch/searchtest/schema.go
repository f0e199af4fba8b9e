package searchtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
)

// Swagger files of the official REST definitions and the request body
// definitions validated from each.
var specFiles = map[string][]string{
	"searchindex.json":   {"IndexBatch", "SearchRequest"},
	"searchservice.json": {"SearchIndex"},
}

// schemaSet holds the compiled request body schemas, and the check of
// their members, by definition name.
type schemaSet struct {
	byDef   map[string]*jsonschema.Schema
	members map[string]*memberSet
}

// loadSchemas compiles the request body definitions of the swagger files in
// dir with JSON Schema draft 4, which swagger 2.0 schemas follow.
//
// Swagger is not plain JSON Schema, so each file's definitions are adapted
// first: the swagger "discriminator" polymorphism becomes an explicit
// dispatch on the discriminator property to the subtype schemas, and enums
// marked modelAsString (extensible) lose their closed value list.
// x-ms-* extensions are unknown keywords and so ignored; the paths (the
// only place with references to files outside dir) are dropped.
//
// The definitions do not close their objects, so the members a definition
// does not declare are refused by a check of their own (see memberSet).
func loadSchemas(dir string) (*schemaSet, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	set := &schemaSet{byDef: map[string]*jsonschema.Schema{}, members: map[string]*memberSet{}}
	for _, file := range specFileNames() {
		path := filepath.Join(dir, file)
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, &SpecDirError{Dir: dir, Err: err}
		}
		var swagger struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(raw, &swagger); err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if len(swagger.Definitions) == 0 {
			return nil, fmt.Errorf("parse %s: no definitions found; is it a swagger 2.0 file?", path)
		}
		defs, subtypes := adaptDefinitions(swagger.Definitions)
		members := &memberSet{defs: swagger.Definitions, subtypes: subtypes}
		url := "file:///searchtest-spec/" + file
		if err := c.AddResource(url, map[string]any{"definitions": defs}); err != nil {
			return nil, fmt.Errorf("add %s: %w", path, err)
		}
		for _, def := range specFiles[file] {
			sch, err := c.Compile(url + "#/definitions/" + def)
			if err != nil {
				return nil, fmt.Errorf("compile %s#/definitions/%s: %w", path, def, err)
			}
			set.byDef[def] = sch
			set.members[def] = members
		}
	}
	return set, nil
}

// adaptDefinitions rewrites swagger definitions into plain draft-4 schemas.
// Every value is re-decoded so the caller's maps are not modified. It also
// returns the subtypes of each polymorphic base (one with a discriminator)
// by discriminator value.
func adaptDefinitions(in map[string]any) (map[string]any, map[string]map[string]string) {
	b, _ := json.Marshal(in)
	var defs map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&defs)
	subtypes := map[string]map[string]string{}

	// Enums marked x-ms-enum modelAsString are open ("extensible") in
	// swagger: the spec's own examples use values outside the list (custom
	// analyzer names, "extractive|count-3"), so only closed enums are kept.
	for _, v := range defs {
		openEnums(v)
	}
	// Vector dimensions: the 2024-07-01 swagger caps SearchField.dimensions
	// at 2048, but Microsoft's current documentation of vector fields gives
	// 2 to 4096 (older revisions said 3072; 3072 is the size of
	// text-embedding-3-large's vectors). The schema follows the
	// documentation, as the store's Config.Validate and this server's own
	// check do (azspec.MaxVectorDimensions), not the swagger.
	if sf, ok := defs["SearchField"].(map[string]any); ok {
		if props, ok := sf["properties"].(map[string]any); ok {
			if dims, ok := props["dimensions"].(map[string]any); ok {
				dims["maximum"] = json.Number(strconv.Itoa(azspec.MaxVectorDimensions))
			}
		}
	}
	// Polymorphism: a base with a discriminator keeps its own constraints
	// under Name__base (which the subtypes' allOf now point at), and the
	// base name becomes a dispatch on the discriminator value.
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		base, ok := defs[name].(map[string]any)
		prop, isBase := base["discriminator"].(string)
		if !ok || !isBase {
			continue
		}
		ref := "#/definitions/" + name
		subtypes[name] = map[string]string{}
		var branches []any
		var values []any
		for _, sub := range slices.Sorted(maps.Keys(defs)) {
			sd, _ := defs[sub].(map[string]any)
			allOf, _ := sd["allOf"].([]any)
			for _, a := range allOf {
				am, _ := a.(map[string]any)
				if am["$ref"] != ref {
					continue
				}
				am["$ref"] = ref + "__base"
				v, _ := sd["x-ms-discriminator-value"].(string)
				if v == "" {
					v = sub
				}
				values = append(values, v)
				subtypes[name][v] = sub
				branches = append(branches, map[string]any{
					"not": map[string]any{"properties": map[string]any{prop: map[string]any{"enum": []any{v}}}},
				}, map[string]any{"$ref": "#/definitions/" + sub})
			}
		}
		defs[name+"__base"] = base
		dispatch := []any{map[string]any{"$ref": ref + "__base"}}
		for i := 0; i < len(branches); i += 2 {
			// "if kind is v then subtype" in draft 4: (not kind=v) or subtype.
			dispatch = append(dispatch, map[string]any{"anyOf": []any{branches[i], branches[i+1]}})
		}
		if len(values) > 0 {
			dispatch = append(dispatch, map[string]any{"properties": map[string]any{prop: map[string]any{"enum": values}}})
		}
		defs[name] = map[string]any{"allOf": dispatch, "description": base["description"]}
	}
	return defs, subtypes
}

// openEnums removes the enum of every (sub)schema whose x-ms-enum says
// modelAsString.
func openEnums(v any) {
	switch t := v.(type) {
	case map[string]any:
		if xe, ok := t["x-ms-enum"].(map[string]any); ok && xe["modelAsString"] == true {
			delete(t, "enum")
		}
		for _, e := range t {
			openEnums(e)
		}
	case []any:
		for _, e := range t {
			openEnums(e)
		}
	}
}

// errSchema marks a request body that does not match the official schema.
var errSchema = errors.New("searchtest: request body does not match the REST API schema")

// validate checks body against the named definition. Members whose value is
// null are dropped first, since the service treats null as "not set" and
// swagger properties are nullable unless marked otherwise.
//
// The body is also checked for members the definitions do not declare,
// null or not (the service does not know them whatever their value): the
// first one found fails with an *unknownMemberError, which carries the
// schema's finding too, if any (a misspelled required member is unknown
// and missing).
func (set *schemaSet) validate(def string, body []byte) error {
	sch, ok := set.byDef[def]
	if !ok {
		return fmt.Errorf("%w: no schema %s", errSchema, def)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: the body is not JSON: %v", errSchema, err)
	}
	unknown := set.members[def].check(def, inst) // before dropNulls edits inst
	err = sch.Validate(dropNulls(inst))
	switch {
	case unknown != nil:
		unknown.schema = err
		return unknown
	case err != nil:
		return fmt.Errorf("%w %s of api-version %s: %v", errSchema, def, APIVersion, err)
	}
	return nil
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}

// validateBody answers 400 when schemas are loaded and body does not match
// the definition.
func (s *Server) validateBody(def string, body []byte) *apiError {
	if s.schemas == nil {
		return nil
	}
	if err := s.schemas.validate(def, body); err != nil {
		msg := err.Error()
		var um *unknownMemberError
		if errors.As(err, &um) {
			msg = um.detail()
		}
		msg = strings.ReplaceAll(msg, "file:///searchtest-spec/", "")
		return &apiError{status: http.StatusBadRequest, code: "InvalidRequestBody",
			message: "The request is invalid. Details: " + msg}
	}
	return nil
}
