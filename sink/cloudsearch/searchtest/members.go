package searchtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// memberSet finds the members of a request body that its definition does
// not declare. The service refuses a body with such a member (400), but the
// swagger definitions are open: without "additionalProperties": false, a
// JSON Schema accepts any member it does not describe, so a misspelled
// attribute would pass the schema unnoticed.
//
// The check walks the body along the swagger definitions themselves, not
// the draft-4 schemas adaptDefinitions makes of them: an object's members
// are the properties of its definition and, through allOf, of the
// definitions it derives from; an object of a polymorphic base (one with a
// discriminator) has the members of the subtype its discriminator value
// names (adaptDefinitions finds them). A definition with
// additionalProperties (IndexAction, whose other members are the fields of
// a document, for one) or declaring no properties at all has dynamic
// members, which are not checked here. Annotations ("@odata.*",
// "@search.*") are allowed everywhere.
type memberSet struct {
	defs     map[string]any               // the swagger definitions of one file, as read
	subtypes map[string]map[string]string // polymorphic base → discriminator value → subtype (adaptDefinitions)
}

// unknownMemberError is a member of a request body object that the
// object's definition does not declare.
type unknownMemberError struct {
	body   string // definition of the request body: SearchIndex, SearchRequest or IndexBatch
	typ    string // definition of the object holding the member
	member string // the member's name
	at     string // JSON pointer of the member in the body
	// schema is what the schema found wrong with the body, if anything:
	// a misspelled required member is missing as well as unknown.
	schema error
}

func (e *unknownMemberError) Error() string {
	return fmt.Sprintf("%v %s of api-version %s: %s", errSchema, e.body, APIVersion, e.detail())
}

// Unwrap makes the error match errSchema, as validate's other errors do.
func (e *unknownMemberError) Unwrap() error { return errSchema }

// detail words the refusal as the service does: an unknown parameter of
// the search and index operations (the members of the body's top-level
// object), or a property that "does not exist on type" (the definition's
// name here) below, with the member's place in the body added, and then
// the schema's finding, if any.
func (e *unknownMemberError) detail() string {
	param, op := "parameters", ""
	switch e.body {
	case "SearchIndex":
		param = "definition"
	case "SearchRequest":
		op = "search"
	case "IndexBatch":
		op = "index"
	}
	var d string
	if op != "" && e.at == "/"+pointerEscaper.Replace(e.member) {
		d = fmt.Sprintf("%s : The parameter '%s' (at '%s') in the request payload is not a valid parameter for the operation '%s'.", param, e.member, e.at, op)
	} else {
		d = fmt.Sprintf("%s : The property '%s' (at '%s') does not exist on type '%s'. Make sure to only use property names that are defined by the type.", param, e.member, e.at, e.typ)
	}
	if e.schema != nil {
		d += " The body does not match the schema either: " + e.schema.Error()
	}
	return d
}

// check returns the first member of inst, the decoded body of the
// definition def, that is not declared (members are visited depth first,
// in name order), or nil.
func (m *memberSet) check(def string, inst any) *unknownMemberError {
	err := m.object(def, m.definition(def), inst, "")
	if err != nil {
		err.body = def
	}
	return err
}

func (m *memberSet) definition(name string) map[string]any {
	d, _ := m.defs[name].(map[string]any)
	return d
}

// value checks v, an instance of schema, at the JSON pointer at; typ names
// the definition schema belongs to.
func (m *memberSet) value(typ string, schema map[string]any, v any, at string) *unknownMemberError {
	if ref, ok := schema["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/definitions/")
		if !ok {
			return nil
		}
		return m.object(name, m.definition(name), v, at)
	}
	switch v := v.(type) {
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return nil
		}
		for i, e := range v {
			if err := m.value(typ, items, e, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case map[string]any:
		// An object schema written inline in typ's definition.
		return m.object(typ, schema, v, at)
	}
	return nil
}

// object checks v against the object schema def of the definition name.
// Anything but a JSON object is left to the schema.
func (m *memberSet) object(name string, def map[string]any, v any, at string) *unknownMemberError {
	obj, ok := v.(map[string]any)
	if !ok || def == nil {
		return nil
	}
	if prop, ok := def["discriminator"].(string); ok {
		kind, _ := obj[prop].(string)
		sub, ok := m.subtypes[name][kind]
		if !ok {
			return nil // a missing or unknown discriminator value is the schema's to refuse
		}
		name, def = sub, m.definition(sub)
	}
	props := map[string]any{}
	open := m.declared(def, props, map[string]bool{})
	if len(props) == 0 {
		return nil // a free-form object
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		p := at + "/" + pointerEscaper.Replace(k)
		if s, ok := props[k].(map[string]any); ok {
			if err := m.value(name, s, obj[k], p); err != nil {
				return err
			}
			continue
		}
		if _, ok := props[k]; ok || open || isAnnotation(k) {
			continue
		}
		return &unknownMemberError{typ: name, member: k, at: p}
	}
	return nil
}

// declared adds to props the properties of def and of the definitions it
// derives from through allOf, recursively, and reports whether any of them
// allows additional properties. seen guards against reference cycles.
func (m *memberSet) declared(def map[string]any, props map[string]any, seen map[string]bool) (open bool) {
	if ap, ok := def["additionalProperties"]; ok && ap != false {
		open = true
	}
	own, _ := def["properties"].(map[string]any)
	for k, s := range own {
		if _, ok := props[k]; !ok {
			props[k] = s
		}
	}
	allOf, _ := def["allOf"].([]any)
	for _, a := range allOf {
		am, _ := a.(map[string]any)
		ref, _ := am["$ref"].(string)
		name, isRef := strings.CutPrefix(ref, "#/definitions/")
		switch {
		case isRef && !seen[name]:
			seen[name] = true
			open = m.declared(m.definition(name), props, seen) || open
		case !isRef && am != nil:
			open = m.declared(am, props, seen) || open
		}
	}
	return open
}

// isAnnotation reports whether a member is an OData or search annotation
// ("@odata.etag", "@odata.type", "@search.action"), which any object may
// carry.
func isAnnotation(member string) bool {
	return strings.HasPrefix(member, "@odata.") || strings.HasPrefix(member, "@search.")
}

// pointerEscaper escapes a member name as a JSON pointer token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
