package main

import (
	"net"
	"testing"
)

// TestServerURL checks the address a devserver tells the user to set: one
// listening on every interface is named by its loopback address, which a
// client can dial and the stores send a key to over plain http, not by
// [::], which they refuse as an endpoint.
func TestServerURL(t *testing.T) {
	tests := []struct {
		name string
		addr net.Addr
		want string
	}{
		{"IPv4 loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8700}, "http://127.0.0.1:8700"},
		{"IPv6 loopback", &net.TCPAddr{IP: net.IPv6loopback, Port: 8700}, "http://[::1]:8700"},
		{"0.0.0.0", &net.TCPAddr{IP: net.IPv4zero, Port: 8701}, "http://127.0.0.1:8701"},
		{"[::], as Go reports 0.0.0.0", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8701}, "http://127.0.0.1:8701"},
		{"no host", &net.TCPAddr{Port: 8702}, "http://127.0.0.1:8702"},
		{"a host's address", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 8700}, "http://192.0.2.7:8700"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverURL(tt.addr); got != tt.want {
				t.Errorf("serverURL(%v) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}
