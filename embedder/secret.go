package embedder

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/internal/credential"
)

// redacted stands for a credential wherever one would be printed.
const redacted = credential.Mark

// secret holds an API key inside a closure. fmt prints a func as an address
// for every verb and never reaches the variables it captured, whereas it
// prints a pointer field's target (after a verb it cannot apply, such as %s
// on a *struct) or a string field in full. Its own methods, Format (which
// fmt uses for every verb) and LogValue, print "[redacted]", should the
// field ever be printed or logged directly.
type secret func() string

// newSecret returns a secret holding key.
func newSecret(key string) secret { return func() string { return key } }

// value returns the key; "" for a nil secret.
func (s secret) value() string {
	if s == nil {
		return ""
	}
	return s()
}

// Format writes "[redacted]" for every verb.
func (s secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue returns "[redacted]".
func (s secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// String describes the Client without any credential: its provider,
// endpoint (without query), model or deployment, dimensions and how it
// authenticates (the name of the key's variable, never the key).
func (c *Client) String() string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("embedder.Client{")
	for i, a := range c.describe() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Key)
		b.WriteString(": ")
		b.WriteString(a.Value.String())
	}
	b.WriteString("}")
	return b.String()
}

// Format writes String for every verb (%v, %+v, %#v, %s, %q, %d, ...): fmt
// never walks the Client's fields, some of which hold credentials.
func (c *Client) Format(f fmt.State, verb rune) {
	s := c.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// LogValue logs the Client as a group of the attributes String shows, so
// that slog.Any("embedder", c) never logs a credential.
func (c *Client) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(c.describe()...)
}

// describe lists what String and LogValue show.
func (c *Client) describe() []slog.Attr {
	attrs := []slog.Attr{
		slog.String("provider", c.provider),
		slog.String("url", c.redactedURL()),
	}
	if c.provider == ProviderAzureOpenAI {
		attrs = append(attrs, slog.String("deployment", c.cfg.Deployment))
	}
	if c.cfg.Model != "" {
		attrs = append(attrs, slog.String("model", c.cfg.Model))
	}
	attrs = append(attrs, slog.Int("dimensions", c.cfg.Dimensions), slog.String("auth", c.cfg.Auth))
	if c.cfg.Auth == AuthAPIKey {
		attrs = append(attrs, slog.String("apiKeyEnv", c.cfg.APIKeyEnv))
	}
	return attrs
}
