package embedder_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/embedder"
)

// TestUnreachableURLNamesSetting checks the errors of a URL that cannot
// work: a host name that does not resolve, a certificate that does not
// verify, an https:// URL whose server speaks plain HTTP and an http://
// URL whose server speaks HTTPS. Each is tried once, names the setting
// that holds the URL and says what to change; the last is a configuration
// error (ErrConfig), not a rejected batch (ErrBadRequest), which the
// pipeline would bisect down to every single chunk, failing every
// document with advice about the model and the caps.
func TestUnreachableURLNamesSetting(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "not reached", http.StatusTeapot) })
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	plainHost := strings.TrimPrefix(plain.URL, "http://")
	tlsHost := strings.TrimPrefix(tlsSrv.URL, "https://")
	noDNS := http.DefaultTransport.(*http.Transport).Clone()
	noDNS.DialContext = func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "embeddings.invalid", IsNotFound: true}}
	}
	tests := []struct {
		name     string
		provider string
		url      string
		rt       http.RoundTripper
		is, isnt error
		words    []string
	}{
		{"no such host", "openai", "https://embeddings.invalid/v1", noDNS, embedder.ErrTransport, nil,
			[]string{"does not resolve", "not retried", "check the host in embedder.baseURL"}},
		{"certificate", "openai", tlsSrv.URL + "/v1", nil, embedder.ErrTransport, nil,
			[]string{"certificate does not verify", "not retried", "check the host name in embedder.baseURL", "SSL_CERT_FILE"}},
		{"https to plain HTTP", "openai", "https://" + plainHost + "/v1", nil, embedder.ErrTransport, nil,
			[]string{"answers in plain HTTP", "write embedder.baseURL with http://"}},
		{"http to HTTPS", "openai", "http://" + tlsHost + "/v1", nil, embedder.ErrConfig, embedder.ErrBadRequest,
			[]string{"HTTP 400", "the server at http://" + tlsHost + " speaks HTTPS", "write embedder.baseURL with https://"}},
		{"http to HTTPS, Azure", "azure-openai", "http://" + tlsHost, nil, embedder.ErrConfig, embedder.ErrBadRequest,
			[]string{"HTTP 400", "speaks HTTPS", "write embedder.endpoint with https://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SLUICE_TEST_KEY", testKey)
			hc := testHTTPClient(t)
			if tt.rt != nil {
				hc.Transport = tt.rt
			}
			cfg := embedder.Config{Provider: tt.provider, Model: "test-model", Dimensions: 32, APIKeyEnv: "SLUICE_TEST_KEY"}
			fastRetries(&cfg)
			var (
				c   *embedder.Client
				err error
			)
			if tt.provider == "openai" {
				cfg.BaseURL = tt.url
				c, err = embedder.NewOpenAI(cfg, embedder.WithHTTPClient(hc))
			} else {
				cfg.Endpoint, cfg.Deployment = tt.url, "emb"
				c, err = embedder.NewAzureOpenAI(context.Background(), cfg, embedder.WithHTTPClient(hc))
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Embed(context.Background(), texts(2))
			if !errors.Is(err, tt.is) || tt.isnt != nil && errors.Is(err, tt.isnt) {
				t.Fatalf("Embed() = %v; want %v, not %v", err, tt.is, tt.isnt)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if st := c.Stats(); st.Requests != 1 || st.Retries != 0 {
				t.Errorf("stats %+v, want one request and no retry", st)
			}
		})
	}
}
