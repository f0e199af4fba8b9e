package searchtest

import (
	"net/http"
	"strings"
)

type routeKind int

const (
	routeIndexes    routeKind = iota // /indexes
	routeIndex                       // /indexes/NAME
	routeStats                       // /indexes/NAME/stats
	routeCount                       // /indexes/NAME/docs/$count
	routeDocsIndex                   // /indexes/NAME/docs/index
	routeDocsSearch                  // /indexes/NAME/docs/search
	routeLookup                      // /indexes/NAME/docs/KEY
)

type route struct {
	kind  routeKind
	index string
	key   string
}

// dataPlane reports whether the route is a documents operation, the kind of
// request that faults are injected into.
func (r route) dataPlane() bool { return r.kind >= routeCount }

// writes reports whether method on the route changes the service: index
// creation, update and deletion, and document uploads.
func (r route) writes(method string) bool {
	switch r.kind {
	case routeIndexes, routeDocsIndex:
		return method == http.MethodPost
	case routeIndex:
		return method == http.MethodPut || method == http.MethodDelete
	}
	return false
}

func notFound(path string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "ResourceNotFound",
		message: "The path " + path + " does not name a resource of this service."}
}

// parseRoute maps a URL path to a route. It accepts both /indexes/NAME and
// the OData /indexes('NAME') form, and docs/KEY as well as docs('KEY').
func parseRoute(path string) (route, *apiError) {
	p := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	if p == "indexes" {
		return route{kind: routeIndexes}, nil
	}
	var name, rest string
	switch {
	case strings.HasPrefix(p, "indexes('"):
		end := strings.Index(p, "')")
		if end < 0 {
			return route{}, notFound(path)
		}
		name, rest = p[len("indexes('"):end], strings.TrimPrefix(p[end+2:], "/")
	case strings.HasPrefix(p, "indexes/"):
		name, rest, _ = strings.Cut(p[len("indexes/"):], "/")
	default:
		return route{}, notFound(path)
	}
	if name == "" {
		return route{}, notFound(path)
	}
	rt := route{index: name}
	switch rest {
	case "":
		rt.kind = routeIndex
	case "stats", "search.stats":
		rt.kind = routeStats
	case "docs/$count":
		rt.kind = routeCount
	case "docs/index", "docs/search.index":
		rt.kind = routeDocsIndex
	case "docs/search", "docs/search.post.search", "docs":
		rt.kind = routeDocsSearch
	default:
		switch {
		case strings.HasPrefix(rest, "docs('") && strings.HasSuffix(rest, "')"):
			rt.kind, rt.key = routeLookup, strings.ReplaceAll(rest[len("docs('"):len(rest)-2], "''", "'")
		case strings.HasPrefix(rest, "docs/") && !strings.Contains(rest[len("docs/"):], "/"):
			rt.kind, rt.key = routeLookup, rest[len("docs/"):]
		default:
			return route{}, notFound(path)
		}
	}
	return rt, nil
}
