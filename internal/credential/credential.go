// Package credential removes credentials from the text that remote services
// send back, and checks that a key can travel in an HTTP header. The
// embedder and the Cloud AI Search sink use it for every message of a
// service before the message reaches an error, a log or a report, and
// Clause to join such a message to their own advice.
package credential

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Mark stands for a credential wherever one would be printed.
const Mark = "[redacted]"

// MinRun is the shortest run of a credential's characters that Redact
// removes when the whole credential is not there (a service quoting a key
// cut short).
const MinRun = 8

// Redact returns text with each of secrets replaced by Mark wherever it
// appears, and so each run of at least MinRun of its bytes. Empty secrets
// are ignored.
func Redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		text = strings.ReplaceAll(text, s, Mark)
		text = redactRuns(text, s)
	}
	return text
}

// redactRuns replaces each run of at least MinRun bytes of text that is
// part of secret with Mark.
func redactRuns(text, secret string) string {
	found := false
	for i := 0; i+MinRun <= len(secret) && !found; i++ {
		found = strings.Contains(text, secret[i:i+MinRun])
	}
	if !found {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		n := 0
		for i+n < len(text) && strings.Contains(secret, text[i:i+n+1]) {
			n++
		}
		if n >= MinRun {
			b.WriteString(Mark)
			i += n
			continue
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

// Clause returns a service's message made ready to be followed by "; " and
// advice: without its final full stop ("Invalid key." becomes "Invalid
// key"), so that errors do not read ".;". An ellipsis ("...") is kept.
func Clause(msg string) string {
	if strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "..") {
		return msg[:len(msg)-1]
	}
	return msg
}

// FromHeader returns the credentials a request's headers carry: the value
// of an api-key header, and of an Authorization header the token after
// "Bearer " (or the whole value under another scheme).
func FromHeader(h http.Header) []string {
	var out []string
	if v := h.Get("api-key"); v != "" {
		out = append(out, v)
	}
	if v := h.Get("Authorization"); v != "" {
		if scheme, token, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			v = strings.TrimSpace(token)
		}
		out = append(out, v)
	}
	return out
}

// HeaderProblem describes the first control character of key (a line
// break, a carriage return, a tab, DEL, ...), which no key or token holds
// and most of which an HTTP header cannot carry, and where it is, without
// showing the key; "" when there is none.
func HeaderProblem(key string) string {
	for i, r := range key {
		var what string
		switch {
		case r == '\n':
			what = "a line break (\\n)"
		case r == '\r':
			what = "a carriage return (\\r)"
		case r == '\t':
			what = "a tab"
		case r == 0x7f:
			what = "a DEL character (0x7F)"
		case r < 0x20:
			what = fmt.Sprintf("a control character (0x%02X)", r)
		default:
			continue
		}
		return fmt.Sprintf("%s at byte %d of %d", what, i+1, len(key))
	}
	return ""
}

// EnvNameProblem says why name cannot name the environment variable that
// holds a credential, without showing name (a key pasted in its place must
// not reach a message); "" when it can. A name is letters, digits and _,
// not starting with a digit, and does not look like a key: without an
// underscore, 32 characters or more (a 32-digit hex Azure OpenAI key, a
// 52-character Azure AI Search admin key), or 20 or more mixing lower and
// upper case letters and digits. Variable names are rarely either.
func EnvNameProblem(name string) string {
	if name == "" {
		return "is empty"
	}
	var lower, upper, digit bool
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9' && i > 0:
			digit = true
		case r == '_':
		default:
			return "is not an environment variable name (letters, digits and _, not starting with a digit)"
		}
	}
	if !strings.Contains(name, "_") && (len(name) >= 32 || (len(name) >= 20 && lower && upper && digit)) {
		return "looks like a key, not the name of the environment variable that holds it"
	}
	return ""
}

// NotShown stands for a value that a message does not show because it may
// be a key.
const NotShown = "a value not shown (it may be a key)"

// QuoteEndpoint returns s quoted for a message about an endpoint setting
// when EndpointShown, and NotShown when not.
func QuoteEndpoint(s string) string {
	if !EndpointShown(s) {
		return NotShown
	}
	return strconv.Quote(s)
}

// EndpointShown reports whether s, the value of an endpoint setting, reads
// as an endpoint and may be shown: an http(s) URL without user information,
// query or fragment, or a host name (letters, digits, '-' and '.', labels of
// at most 63 characters, at least one '.', or localhost) without its scheme;
// a URL's host may also be an IPv6 literal in brackets.
// Anything else may be a key set where the endpoint goes (the two variables
// swapped), and no message may show it.
func EndpointShown(s string) bool {
	host := s
	if u, err := url.Parse(s); err != nil {
		return false
	} else if u.Scheme != "" {
		if (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return false
		}
		host = u.Hostname()
		if strings.HasPrefix(u.Host, "[") && net.ParseIP(host) != nil {
			return true // an IPv6 literal in brackets, such as http://[::1]:8700: no key has that shape
		}
	}
	if !strings.Contains(host, ".") && host != "localhost" {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if len(label) > 63 || strings.ContainsFunc(label, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
		}) {
			return false
		}
	}
	return true
}
