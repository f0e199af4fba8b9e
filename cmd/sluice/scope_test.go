package main

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

// TestScopeOfEnvironmentEndpoint: the manifest keeps one scope per service
// and index even when the endpoint comes from CLOUD_AI_SEARCH_ENDPOINT, so
// an index of the same name on another service, reached through the same
// state file, is ingested in full instead of being called unchanged.
func TestScopeOfEnvironmentEndpoint(t *testing.T) {
	const key = "test-admin-key"
	_, first := searchtest.Start(t, searchtest.Options{Key: key, RecordLimit: -1})
	_, second := searchtest.Start(t, searchtest.Options{Key: key, RecordLimit: -1})
	t.Setenv("CLOUD_AI_SEARCH_KEY", key)
	dir := writeCloudProject(t, "twin")
	for _, endpoint := range []string{first, second + "/"} {
		t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", endpoint)
		out, errOut, code := sluice(t, dir, "run", "docs", "--json")
		if code != exitOK {
			t.Fatalf("run against %s: exit %d: %s", endpoint, code, errOut)
		}
		if rep := jsonLines(t, out); len(rep) != 1 || rep[0]["files_added"] != float64(2) {
			t.Errorf("run against %s: %v, want both documents new", endpoint, rep)
		}
		out, errOut, code = sluice(t, dir, "index", "stats", "--json")
		if code != exitOK || !strings.Contains(out, `"nodes":2`) || !strings.Contains(out, `"documents":2`) {
			t.Errorf("index stats of %s: exit %d, %s %s; want 2 nodes", endpoint, code, out, errOut)
		}
	}
}

// TestSinkScope: the scope names the service and the index, however the
// endpoint is given: from the environment, with or without a trailing
// slash, in any letter case.
func TestSinkScope(t *testing.T) {
	cloud := func(endpoint string) Config {
		cfg := DefaultConfig()
		cfg.Sink.Type = "cloudsearch"
		cfg.Sink.CloudSearch.Endpoint = endpoint
		cfg.Sink.CloudSearch.IndexName = "docs"
		return cfg
	}
	const want = "cloudsearch:https://svc.search.windows.net/indexes/docs"
	t.Setenv("CLOUD_AI_SEARCH_ENDPOINT", "https://svc.search.windows.net/")
	for _, cfg := range []Config{cloud(""), cloud("https://svc.search.windows.net"), cloud("https://svc.search.windows.net/"),
		cloud("https://SVC.Search.Windows.NET/"), cloud("HTTPS://svc.search.windows.net")} {
		if got := sinkScope(cfg); got != want {
			t.Errorf("endpoint %q: scope %q, want %q", cfg.Sink.CloudSearch.Endpoint, got, want)
		}
	}
}
