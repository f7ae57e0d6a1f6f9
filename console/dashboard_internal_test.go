package console

import "testing"

// TestCountString: a capped count is a floor, shown with a "+".
func TestCountString(t *testing.T) {
	for _, tt := range []struct {
		c    count
		want string
	}{
		{count{N: 0}, "0"},
		{count{N: 12}, "12"},
		{count{N: 10000, Capped: true}, "10000+"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}
