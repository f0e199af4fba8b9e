package searchtest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestServeStopsOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := NewServer(Options{Key: testKey, Latency: time.Hour})
	entered := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		srv.ServeHTTP(w, r)
	})
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()

	// A request stuck in injected latency must end when Serve is cancelled.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	reqDone := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/indexes?api-version="+APIVersion, nil)
		req.Header.Set("api-key", testKey)
		resp, err := client.Do(req)
		if err != nil {
			reqDone <- -1
			return
		}
		resp.Body.Close()
		reqDone <- resp.StatusCode
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the server")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	select {
	case st := <-reqDone:
		if st == http.StatusOK {
			t.Errorf("request in an hour of latency answered 200")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight request did not finish")
	}
}

func TestServeRefusesBadSpec(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), ln, NewServer(Options{SpecDir: t.TempDir()})); err == nil {
		t.Fatal("Serve with a missing spec dir returned nil")
	}
}
