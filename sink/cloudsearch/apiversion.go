package cloudsearch

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/internal/azspec"
)

// The API version (sink.cloudsearch.apiVersion, CLOUD_SEARCH_API_VERSION).
//
// A wrong API version is a configuration error (exit code 2 in the CLI),
// whether Sluice or the service finds it:
//
//   - Before any request, a version is refused when it cannot be one the
//     service publishes for Sluice's requests: not of the form YYYY-MM-DD
//     or YYYY-MM-DD-preview, or dated no later than the newest published
//     version Sluice knows (azspec.APIVersions) without being one of them
//     (a typo such as 1999-01-01 or 2024-07-10, or a version older than
//     vector search as Sluice uses it, such as 2020-06-30). The list of
//     published versions up to the newest is known, so refusing these costs
//     users nothing, and the error comes before a single document is read
//     or embedded.
//   - A version dated after the newest Sluice knows is sent as is, with a
//     warning: Microsoft publishes new versions between Sluice releases,
//     and a user who needs one should not need a Sluice update to try it.
//     If the service refuses it (400 "Invalid or missing api-version query
//     string parameter.", which is how it answers a version it does not
//     serve), that answer becomes the same *ConfigError, naming the setting,
//     the variable and the versions Sluice knows, and wrapping
//     sink.ErrUnavailable so that a pipeline stops at once (no request can
//     succeed).

// apiVersionProblem returns what is wrong with the API version v, or ""
// when v is a known version or one dated after all known versions.
func apiVersionProblem(v string) string {
	switch {
	case !apiVersionRE.MatchString(v):
		return "is not an API version (YYYY-MM-DD or YYYY-MM-DD-preview)"
	case azspec.KnownAPIVersion(v), azspec.AfterPublished(v):
		return ""
	}
	for _, old := range azspec.OlderAPIVersions {
		if strings.EqualFold(v, old) {
			return "is older than vector search as Sluice uses it (vectorQueries and vector search profiles)"
		}
	}
	return "is not an API version that Cloud AI Search publishes"
}

// apiVersionHint says which versions to use, naming the setting and the
// variable; withNewer adds that a version newer than those Sluice knows
// is sent as is.
func apiVersionHint(withNewer bool) string {
	h := "set " + settingPrefix + "apiVersion or " + EnvAPIVersion + " to a version Sluice knows: " +
		strings.Join(azspec.APIVersions, ", ") + "; or leave both empty for " + DefaultAPIVersion
	if withNewer {
		h += " (a version dated after " + azspec.NewestAPIVersion() + " is sent as is, as one published after this Sluice)"
	}
	return h
}

// refusedAPIVersion reports whether se is the service's answer to an
// api-version it does not serve: 400 "Invalid or missing api-version
// query string parameter." (the store always sends one).
func refusedAPIVersion(se *ServiceError) bool {
	return se.StatusCode == http.StatusBadRequest &&
		strings.HasPrefix(strings.ToLower(se.Message), "invalid or missing api-version")
}

// apiVersionRefused is the *ConfigError for the service's refusal se of
// the store's API version.
func (s *Store) apiVersionRefused(se *ServiceError) *ConfigError {
	from := ""
	if s.apiVersionFrom != "" {
		from = " (from " + s.apiVersionFrom + ")"
	}
	return configErrCause("apiVersion", fmt.Sprintf("the service refused api-version %q%s", s.apiVersion, from),
		&refusedSettingError{se}, apiVersionHint(false))
}

// refusedSettingError is the service's refusal of a setting (the API
// version, an http:// endpoint whose server speaks HTTPS): no request can
// succeed with it.
type refusedSettingError struct{ se *ServiceError }

func (e *refusedSettingError) Error() string { return e.se.Error() }

// Unwrap returns the *ServiceError and sink.ErrUnavailable.
func (e *refusedSettingError) Unwrap() []error { return []error{e.se, sink.ErrUnavailable} }
