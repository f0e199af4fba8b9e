package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// TestCredentialConfigErrorKeepsCause checks that a Microsoft Entra
// credential that cannot be built is reported as a *ConfigError that is
// still ErrConfig, keeps azidentity's error for errors.As, keeps its
// message, and leaks no secret.
func TestCredentialConfigErrorKeepsCause(t *testing.T) {
	authErr := &azidentity.AuthenticationFailedError{}
	cause := fmt.Errorf("no token for you: %w", authErr)
	failDefault := func(o *options) {
		o.newDefaultCredential = func() (azcore.TokenCredential, error) { return nil, cause }
	}
	failManaged := func(o *options) {
		o.newManagedCredential = func(*azidentity.ManagedIdentityCredentialOptions) (azcore.TokenCredential, error) {
			return nil, cause
		}
	}
	tests := []struct {
		name  string
		kind  CredentialKind
		env   string // AZURE_TOKEN_CREDENTIALS, "" to leave it alone
		opt   Option
		as    bool // the cause is the injected *azidentity.AuthenticationFailedError
		words []string
	}{
		{name: "default", kind: DefaultCredential, opt: failDefault, as: true,
			words: []string{"cloudsearch: sink.cloudsearch.credential: DefaultAzureCredential is unavailable: " + cause.Error() + "; sign in with `az login`"}},
		{name: "managed identity", kind: ManagedIdentity, opt: failManaged, as: true,
			words: []string{"cloudsearch: sink.cloudsearch.credential: ManagedIdentityCredential is unavailable: " + cause.Error() + "; run where a managed identity is assigned"}},
		{name: "default, real azidentity error", kind: DefaultCredential, env: "not-a-credential-kind",
			words: []string{"DefaultAzureCredential is unavailable: invalid AZURE_TOKEN_CREDENTIALS value", "not-a-credential-kind", "az login"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("AZURE_TOKEN_CREDENTIALS", tt.env)
			}
			// azidentity reads the process environment, not WithGetenv's:
			// the secrets it could put in a message are set there.
			for k, v := range map[string]string{"AZURE_TENANT_ID": "tenant-2718", "AZURE_CLIENT_ID": "client-1618",
				"AZURE_CLIENT_SECRET": "client-secret-31415", "AZURE_CLIENT_CERTIFICATE_PASSWORD": "cert-password-1414",
				"AZURE_PASSWORD": "user-password-1732"} {
				t.Setenv(k, v)
			}
			cfg := testConfig("https://example.search.windows.net")
			cfg.Credential = tt.kind
			opts := []Option{WithGetenv(envOf(map[string]string{EnvKey: testKey, "AZURE_CLIENT_SECRET": "client-secret-31415"}))}
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			_, err := New(context.Background(), cfg, opts...)
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("errors.Is(%v, ErrConfig) = false", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Err == nil || ce.Setting != "sink.cloudsearch.credential" {
				t.Fatalf("New = %#v, want a *ConfigError for sink.cloudsearch.credential with its cause", err)
			}
			var afe *azidentity.AuthenticationFailedError
			if got := errors.As(err, &afe); got != tt.as || (tt.as && afe != authErr) {
				t.Errorf("errors.As(err, *azidentity.AuthenticationFailedError) = %v (%p), want %v (%p)", got, afe, tt.as, authErr)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			for _, s := range []string{testKey, "client-secret-31415", "cert-password-1414", "user-password-1732"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("message %q leaks a secret", err)
				}
			}
		})
	}
}

// TestConfigErrorUnwrap checks ConfigError's message and unwrapping with
// and without a cause.
func TestConfigErrorUnwrap(t *testing.T) {
	cause := errors.New("the cause")
	tests := []struct {
		name string
		err  *ConfigError
		want string
	}{
		{"no cause", &ConfigError{Setting: "sink.cloudsearch.x", Reason: "is bad", Hint: "fix it"}, "cloudsearch: sink.cloudsearch.x: is bad; fix it"},
		{"cause", &ConfigError{Setting: "sink.cloudsearch.x", Reason: "is bad", Hint: "fix it", Err: cause}, "cloudsearch: sink.cloudsearch.x: is bad: the cause; fix it"},
		{"cause, no hint", &ConfigError{Setting: "sink.cloudsearch.x", Reason: "is bad", Err: cause}, "cloudsearch: sink.cloudsearch.x: is bad: the cause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if !errors.Is(tt.err, ErrConfig) {
				t.Error("errors.Is(err, ErrConfig) = false")
			}
			if got := errors.Is(tt.err, cause); got != (tt.err.Err != nil) {
				t.Errorf("errors.Is(err, cause) = %v", got)
			}
		})
	}
}
