package azspec

import "testing"

// TestAfterPublished checks which unknown versions may have been published
// after APIVersions was read: only those dated after its newest.
func TestAfterPublished(t *testing.T) {
	if got := NewestAPIVersion(); got != "2025-11-01-preview" {
		t.Errorf("NewestAPIVersion() = %s, want 2025-11-01-preview", got)
	}
	tests := []struct {
		v    string
		want bool
	}{
		{"1999-01-01", false},
		{"2024-07-10", false},
		{"2025-11-01", false}, // the newest date, but not a version published on it
		{"2025-11-02", true},
		{"2026-04-01-preview", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := AfterPublished(tt.v); got != tt.want {
			t.Errorf("AfterPublished(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
	for _, v := range append(append([]string{}, APIVersions...), OlderAPIVersions...) {
		if AfterPublished(v) {
			t.Errorf("AfterPublished(%q) = true for a listed version", v)
		}
	}
}
