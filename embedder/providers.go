package embedder

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/sluice-dev/sluice/internal/credential"
)

// CognitiveServicesScope is the Microsoft Entra scope of Azure OpenAI tokens.
const CognitiveServicesScope = "https://cognitiveservices.azure.com/.default"

// NewOpenAI returns a Client for any OpenAI-compatible embeddings endpoint
// (OpenAI, Ollama, vLLM, text-embeddings-inference, LM Studio): it posts to
// {baseURL}/embeddings with the configured model. cfg.Provider may be empty.
//
// With auth apiKey (the default) the key is read once, here, from the
// variable named by apiKeyEnv (default OPENAI_API_KEY), without the white
// space around it, and sent as a Bearer token; an unset variable returns a
// *MissingKeyError naming it, and a key holding a control character an
// *InvalidKeyError. With auth none no key is sent.
func NewOpenAI(cfg Config, opts ...Option) (*Client, error) {
	if cfg.Provider == "" {
		cfg.Provider = ProviderOpenAI
	}
	if cfg.Provider != ProviderOpenAI {
		return nil, cfgErr("embedder.provider", "NewOpenAI needs provider openai, got %q", cfg.Provider)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.ApplyDefaults()
	c := newClient(cfg, ProviderOpenAI, opts)
	c.url = strings.TrimRight(cfg.BaseURL, "/") + "/embeddings"
	c.notFound = fmt.Sprintf("model %q or the URL %s was not found; check embedder.model and embedder.baseURL (it should end in /v1)", cfg.Model, c.url)
	c.auth = func(context.Context, *http.Request) error { return nil }
	if cfg.Auth == AuthAPIKey {
		key, err := readKey(ProviderOpenAI, cfg.APIKeyEnv)
		if err != nil {
			return nil, err
		}
		c.secret = newSecret(key)
		c.auth = func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+key)
			return nil
		}
		c.authHint = "the key in environment variable " + cfg.APIKeyEnv + " (embedder.apiKeyEnv) was refused; set it to a valid key for " + cfg.BaseURL
	} else {
		c.authHint = "the server requires a key; set embedder.auth: apiKey and put the key in the variable named by embedder.apiKeyEnv"
	}
	return c, nil
}

// NewAzureOpenAI returns a Client for an Azure OpenAI deployment: it posts
// to {endpoint}/openai/deployments/{deployment}/embeddings?api-version=....
// cfg.Provider may be empty.
//
// With auth apiKey (the default) the key is read once, here, from the
// variable named by apiKeyEnv (default AZURE_OPENAI_API_KEY), without the
// white space around it, and sent in the api-key header; an unset variable
// returns a *MissingKeyError naming it, and a key holding a control
// character an *InvalidKeyError.
// With auth defaultAzureCredential or managedIdentity, Microsoft Entra tokens
// for CognitiveServicesScope come from azidentity (or from the credential
// given with WithTokenCredential); a first token is obtained here, bounded
// by ctx, so a credential that cannot work fails before any request. Auth
// managedIdentity uses the user-assigned identity whose client id is in
// managedIdentityClientId or, when that is empty, in the AZURE_CLIENT_ID
// variable; with neither, the system-assigned identity.
func NewAzureOpenAI(ctx context.Context, cfg Config, opts ...Option) (*Client, error) {
	if cfg.Provider == "" {
		cfg.Provider = ProviderAzureOpenAI
	}
	if cfg.Provider != ProviderAzureOpenAI {
		return nil, cfgErr("embedder.provider", "NewAzureOpenAI needs provider azure-openai, got %q", cfg.Provider)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.ApplyDefaults()
	c := newClient(cfg, ProviderAzureOpenAI, opts)
	// The credential from WithTokenCredential lives on only in the auth
	// closure: fmt can print a struct-valued credential's fields, never a
	// closure's.
	cred := c.credential
	c.credential = nil
	c.url = strings.TrimRight(cfg.Endpoint, "/") + "/openai/deployments/" + url.PathEscape(cfg.Deployment) +
		"/embeddings?api-version=" + url.QueryEscape(cfg.APIVersion)
	c.notFound = fmt.Sprintf("deployment %q was not found at %s; check embedder.deployment, embedder.endpoint and embedder.apiVersion (%s)",
		cfg.Deployment, cfg.Endpoint, cfg.APIVersion)
	if cfg.Auth == AuthAPIKey {
		key, err := readKey(ProviderAzureOpenAI, cfg.APIKeyEnv)
		if err != nil {
			return nil, err
		}
		c.secret = newSecret(key)
		c.auth = func(_ context.Context, r *http.Request) error {
			r.Header.Set("api-key", key)
			return nil
		}
		c.authHint = "the key in environment variable " + cfg.APIKeyEnv + " (embedder.apiKeyEnv) was refused; copy a key of the resource at " + cfg.Endpoint
		return c, nil
	}
	who := "" // the identity, when Sluice chose it
	if cred == nil {
		var err error
		if cred, err = azureCredential(cfg, os.Getenv); err != nil {
			return nil, err
		}
		if cfg.Auth == AuthManagedIdentity {
			who = " as " + managedIdentityName(cfg, os.Getenv)
		}
	}
	opt := policy.TokenRequestOptions{Scopes: []string{CognitiveServicesScope}}
	if _, err := cred.GetToken(ctx, opt); err != nil {
		return nil, fmt.Errorf("embedder: embedder.auth %s could not obtain a Microsoft Entra token for %s%s: %w (%w)",
			cfg.Auth, CognitiveServicesScope, who, err, ErrUnauthorized)
	}
	c.auth = func(ctx context.Context, r *http.Request) error {
		tok, err := cred.GetToken(ctx, opt)
		if err != nil {
			return fmt.Errorf("embedder: getting a Microsoft Entra token: %w (%w)", err, ErrUnauthorized)
		}
		r.Header.Set("Authorization", "Bearer "+tok.Token)
		return nil
	}
	c.authHint = "the Microsoft Entra identity" + who + " was refused; grant it the Cognitive Services OpenAI User role on the resource"
	return c, nil
}

// WithTokenCredential makes an azure-openai Client with Entra auth use cred
// instead of building one from embedder.auth.
func WithTokenCredential(cred azcore.TokenCredential) Option {
	return func(c *Client) { c.credential = cred }
}

// azureCredential builds the Microsoft Entra credential of cfg.Auth,
// reading the environment with getenv.
func azureCredential(cfg Config, getenv func(string) string) (azcore.TokenCredential, error) {
	var (
		cred azcore.TokenCredential
		err  error
	)
	if cfg.Auth == AuthManagedIdentity {
		cred, err = azidentity.NewManagedIdentityCredential(managedIdentityOptions(cfg, getenv))
	} else {
		cred, err = azidentity.NewDefaultAzureCredential(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("embedder: embedder.auth %s: creating the credential: %w", cfg.Auth, err)
	}
	return cred, nil
}

// managedIdentityClientID returns the client id of the user-assigned
// identity of auth managedIdentity and the setting or variable it came
// from: embedder.managedIdentityClientId, else the AZURE_CLIENT_ID variable
// (read with getenv), as sink.cloudsearch does by default. An empty id
// means the system-assigned identity.
func managedIdentityClientID(cfg Config, getenv func(string) string) (id, from string) {
	if cfg.ManagedIdentityClientID != "" {
		return cfg.ManagedIdentityClientID, "embedder.managedIdentityClientId"
	}
	if id := getenv(EnvAzureClientID); id != "" {
		return id, EnvAzureClientID
	}
	return "", ""
}

// managedIdentityOptions selects the identity managedIdentityClientID
// returns.
func managedIdentityOptions(cfg Config, getenv func(string) string) *azidentity.ManagedIdentityCredentialOptions {
	o := &azidentity.ManagedIdentityCredentialOptions{}
	if id, _ := managedIdentityClientID(cfg, getenv); id != "" {
		o.ID = azidentity.ClientID(id)
	}
	return o
}

// managedIdentityName names the identity of auth managedIdentity, for
// messages. A client id is not a secret.
func managedIdentityName(cfg Config, getenv func(string) string) string {
	id, from := managedIdentityClientID(cfg, getenv)
	if id == "" {
		return "the system-assigned identity (embedder.managedIdentityClientId and " + EnvAzureClientID + " are empty)"
	}
	return "the user-assigned identity " + id + " from " + from
}

// readKey reads the API key from the variable env, without the white space
// around it (a trailing newline or carriage return, as a copied key or a
// .env file edited on Windows may have, is no part of a key). An unset or
// blank variable gives a *MissingKeyError; a key that still holds a
// control character gives an *InvalidKeyError. Neither shows the key.
func readKey(provider, env string) (string, error) {
	key := strings.TrimSpace(os.Getenv(env))
	if key == "" {
		return "", &MissingKeyError{Provider: provider, Env: env}
	}
	if problem := credential.HeaderProblem(key); problem != "" {
		return "", &InvalidKeyError{Provider: provider, Env: env, Problem: problem}
	}
	return key, nil
}
