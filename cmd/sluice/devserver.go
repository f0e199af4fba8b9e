package main

import (
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
)

func (a *app) devserverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "devserver search|embeddings",
		Short: "Run a local test server: Cloud AI Search or an OpenAI-compatible embeddings API",
		Long: "Run a strict local stand-in for an external service, for trying Sluice without an account and for\n" +
			"benchmarks. The servers enforce the services' documented limits and can inject faults. They keep\n" +
			"data in memory and serve until interrupted.",
	}
	requireSubcommand(cmd)
	cmd.AddCommand(a.devSearchCommand(), a.devEmbeddingsCommand())
	return cmd
}

func (a *app) devSearchCommand() *cobra.Command {
	var (
		addr    string
		opts    searchtest.Options
		specDir string
	)
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Serve a strict Cloud AI Search (Azure AI Search REST 2024-07-01) stand-in",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFaults(opts.FaultRate, map[string]time.Duration{"latency": opts.Latency}); err != nil {
				return err
			}
			if opts.Key == "" {
				opts.Key = os.Getenv("CLOUD_AI_SEARCH_KEY")
			}
			opts.SpecDir = specDir
			opts.RecordLimit = -1
			srv := searchtest.NewServer(opts)
			if err := srv.SpecError(); err != nil {
				return usagef("--spec-dir: %v", err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("--addr %s: %v", addr, err)
			}
			auth := "any request accepted (no --key and no $CLOUD_AI_SEARCH_KEY)"
			if opts.Key != "" {
				auth = "api-key required"
			}
			if dir := srv.SpecDir(); dir != "" {
				auth += "; request bodies validated against the REST definitions in " + dir
			}
			fmt.Fprintf(a.stdout, "Cloud AI Search test server on %s (%s); set sink.cloudsearch.endpoint to this address. Ctrl-C stops it.\n", serverURL(ln.Addr()), auth)
			return searchtest.Serve(cmd.Context(), ln, srv)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8700", "listen address `HOST:PORT`")
	cmd.Flags().StringVar(&opts.Key, "key", "", "admin api-key `KEY` every request must carry (default $CLOUD_AI_SEARCH_KEY; none: accept all)")
	cmd.Flags().Float64Var(&opts.FaultRate, "fault-rate", 0, "fraction of document requests answered 503 with Retry-After")
	cmd.Flags().DurationVar(&opts.Latency, "latency", 0, "added to every request")
	cmd.Flags().StringVar(&specDir, "spec-dir", "", "the folder `DIR` of the official "+searchtest.APIVersion+" REST definitions (searchindex.json, searchservice.json), or the folder above it with one folder per api-version: validate every request body against them")
	return cmd
}

func (a *app) devEmbeddingsCommand() *cobra.Command {
	var (
		addr string
		opts embedtest.Options
	)
	cmd := &cobra.Command{
		Use:   "embeddings",
		Short: "Serve an OpenAI-compatible embeddings API with quotas, latency and faults",
		Long: "Serve POST /v1/embeddings and the Azure OpenAI route with deterministic (hashing) vectors. It enforces\n" +
			"request caps (400), an RPM/TPM quota (429 with retry-after-ms and x-ratelimit-* headers), latency of a\n" +
			"base plus a cost per token, and injected faults.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFaults(opts.FaultRate, map[string]time.Duration{"latency": opts.Latency, "token-latency": opts.TokenLatency}); err != nil {
				return err
			}
			if opts.RPM < 0 || opts.TPM < 0 {
				return usagef("--rpm and --tpm must be 0 (unlimited) or more")
			}
			if opts.Dimensions < 1 {
				return usagef("--dimensions is %d; use a vector length of 1 or more, such as 1536", opts.Dimensions)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("--addr %s: %v", addr, err)
			}
			fmt.Fprintf(a.stdout, "Embeddings test server on %s/v1 (rpm %d, tpm %d; 0 = unlimited); set embedder.baseURL to it. Ctrl-C stops it.\n", serverURL(ln.Addr()), opts.RPM, opts.TPM)
			return searchtest.Serve(cmd.Context(), ln, embedtest.NewHandler(opts))
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8701", "listen address `HOST:PORT`")
	cmd.Flags().IntVar(&opts.RPM, "rpm", 0, "requests-per-minute quota (0: unlimited)")
	cmd.Flags().IntVar(&opts.TPM, "tpm", 0, "tokens-per-minute quota (0: unlimited)")
	cmd.Flags().DurationVar(&opts.Latency, "latency", 0, "base latency of every request")
	cmd.Flags().DurationVar(&opts.TokenLatency, "token-latency", 0, "latency added per input token")
	cmd.Flags().Float64Var(&opts.FaultRate, "fault-rate", 0, "fraction of requests answered with an injected fault (5xx, reset, stall, shuffled data)")
	cmd.Flags().IntVar(&opts.Dimensions, "dimensions", 1536, "vector length")
	cmd.Flags().StringVar(&opts.Key, "key", "", "API key `KEY` every request must carry (none: accept all)")
	return cmd
}

// serverURL is the http URL at which a client on this machine reaches a
// devserver listening at addr. A listener on every interface (--addr
// 0.0.0.0:PORT or [::]:PORT, which Go reports as [::]) is named by its
// loopback address: [::] is no address a client can dial, and the stores
// send a key over plain http only to a loopback address.
func serverURL(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && (a.IP == nil || a.IP.IsUnspecified()) {
		return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	return "http://" + addr.String()
}

// checkFaults checks a devserver's --fault-rate (a fraction, NaN refused)
// and latencies (none negative), by flag name.
func checkFaults(rate float64, latencies map[string]time.Duration) error {
	if !(rate >= 0 && rate <= 1) {
		return usagef("--fault-rate is %v; use a fraction between 0 and 1", rate)
	}
	for _, name := range slices.Sorted(maps.Keys(latencies)) {
		if d := latencies[name]; d < 0 {
			return usagef("--%s is %s; use 0s or more", name, d)
		}
	}
	return nil
}
