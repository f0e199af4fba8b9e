package cloudsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// failingCredential is an azcore.TokenCredential that never gets a token.
type failingCredential struct{ err error }

func (f failingCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, f.err
}

// entraRefusal is the error azidentity returns when Microsoft Entra ID
// answers a token request with an error.
func entraRefusal() error {
	return &azidentity.AuthenticationFailedError{RawResponse: &http.Response{
		StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized",
		Body: io.NopCloser(strings.NewReader(`{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)),
	}}
}

// TestCredentialCannotGetToken checks that a token credential that fails
// is reported as an authentication failure naming the credential and the
// remedy (ErrAuth and sink.ErrUnavailable), not as an unreachable
// endpoint, and that nothing is sent without a token.
func TestCredentialCannotGetToken(t *testing.T) {
	unavailable := azidentity.NewCredentialUnavailableError("ManagedIdentityCredential: no managed identity endpoint is available")
	chain := func(errs ...error) azcore.TokenCredential {
		var creds []azcore.TokenCredential
		for _, e := range errs {
			creds = append(creds, failingCredential{e})
		}
		c, err := azidentity.NewChainedTokenCredential(creds, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name        string
		cred        azcore.TokenCredential
		unavailable bool
		words       []string
	}{
		{"unavailable", failingCredential{unavailable}, true, []string{"is unavailable here", "no managed identity endpoint"}},
		{"refused by Entra ID", failingCredential{entraRefusal()}, false, []string{"could not get a token", "AADSTS7000215"}},
		{"chain of unavailable credentials", chain(unavailable, azidentity.NewCredentialUnavailableError("AzureCLICredential: az not found")), true, []string{"az not found"}},
		{"chain ending in a refusal", chain(unavailable, entraRefusal()), false, []string{"could not get a token"}},
		{"any other error", failingCredential{errors.New("key vault sealed")}, false, []string{"key vault sealed"}},
	}
	ops := []struct {
		name string
		run  func(context.Context, *Store) error
	}{
		{"list indexes", func(ctx context.Context, s *Store) error { _, err := s.ListIndexes(ctx); return err }},
		{"add", func(ctx context.Context, s *Store) error { _, err := s.Add(ctx, makeNodes("a.md", 2)); return err }},
	}
	for _, tt := range tests {
		for _, op := range ops {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				srv, url := searchtest.Start(t, searchtest.Options{BearerTokens: []string{"good"}})
				s, err := openStore(t, url, func(c *Config) { c.IndexManagement = NoValidation }, WithCredential(tt.cred))
				if err != nil {
					t.Fatal(err)
				}
				err = op.run(context.Background(), s)
				var ce *CredentialError
				if !errors.As(err, &ce) || !errors.Is(err, ErrAuth) || !errors.Is(err, sink.ErrUnavailable) {
					t.Fatalf("err = %v, want a *CredentialError matching ErrAuth and sink.ErrUnavailable", err)
				}
				if errors.Is(err, ErrConnection) || strings.Contains(err.Error(), "firewall") {
					t.Errorf("err = %v, reported as a connection failure", err)
				}
				if ce.Unavailable != tt.unavailable {
					t.Errorf("Unavailable = %v, want %v", ce.Unavailable, tt.unavailable)
				}
				words := append([]string{fmt.Sprintf("%T", tt.cred), "listing indexes", "sluice doctor",
					"Search Index Data Contributor", "Search Service Contributor", "WithCredential"}, tt.words...)
				for _, w := range words {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q lacks %q", err, w)
					}
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent without a token, want 0", n)
				}
			})
		}
	}
}

// TestCredentialFailureTypes checks the recognition of azidentity's
// errors, wrapped or not, apart from the store's own marking.
func TestCredentialFailureTypes(t *testing.T) {
	tests := []struct {
		name                string
		err                 error
		failed, unavailable bool
	}{
		{"unavailable", azidentity.NewCredentialUnavailableError("no az"), true, true},
		{"unavailable, wrapped", fmt.Errorf("token: %w", azidentity.NewCredentialUnavailableError("no az")), true, true},
		{"unavailable, joined", errors.Join(errors.New("x"), azidentity.NewCredentialUnavailableError("no az")), true, true},
		{"authentication required", &azidentity.AuthenticationRequiredError{}, true, true},
		{"authentication failed", entraRefusal(), true, false},
		{"authentication failed, wrapped", fmt.Errorf("token: %w", entraRefusal()), true, false},
		{"marked by the store", &tokenError{err: errors.New("sealed")}, true, false},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false, false},
		{"message only", errors.New("CredentialUnavailableError: look-alike"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed, unavailable := credentialFailure(tt.err)
			if failed != tt.failed || unavailable != tt.unavailable {
				t.Errorf("credentialFailure = %v, %v; want %v, %v", failed, unavailable, tt.failed, tt.unavailable)
			}
		})
	}
}
