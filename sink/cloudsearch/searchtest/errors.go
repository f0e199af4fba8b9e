package searchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an error answered to the client in the service's JSON shape:
// {"error": {"code": "...", "message": "..."}}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "InvalidRequestParameter", message: fmt.Sprintf(format, args...)}
}

func indexNotFound(name string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "ResourceNotFound",
		message: fmt.Sprintf("No index with the name '%s' was found in the service.", name)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; odata.metadata=minimal; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]any{"code": e.code, "message": e.message}})
}
