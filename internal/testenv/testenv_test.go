package testenv

import (
	"os"
	"testing"
)

// TestInCI checks the rule of InCI on the values CI takes.
func TestInCI(t *testing.T) {
	for _, tt := range []struct {
		value string
		set   bool // set CI to value; false leaves CI unset
		want  bool
	}{
		{"", false, false},
		{"", true, false},
		{"0", true, false},
		{"false", true, false},
		{"FALSE", true, false},
		{"False", true, false},
		{" false ", true, false},
		{"true", true, true},
		{"TRUE", true, true},
		{"1", true, true},
		{"yes", true, true},
		{"github-actions", true, true},
	} {
		name := "unset"
		if tt.set {
			name = "CI=" + tt.value
		}
		t.Run(name, func(t *testing.T) {
			if tt.set {
				t.Setenv("CI", tt.value)
			} else {
				t.Setenv("CI", "") // restored at the end of the test
				if err := os.Unsetenv("CI"); err != nil {
					t.Fatal(err)
				}
			}
			if got := InCI(); got != tt.want {
				t.Errorf("InCI() with %s = %v, want %v", name, got, tt.want)
			}
		})
	}
}
