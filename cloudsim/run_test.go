package cloudsim

import "testing"

func TestNthAddr(t *testing.T) {
	for _, tc := range []struct {
		listen string
		i      int
		want   string
		err    bool
	}{
		{"127.0.0.1:0", 0, "127.0.0.1:0", false},
		{"127.0.0.1:0", 3, "127.0.0.1:0", false},
		{"127.0.0.1:8443", 0, "127.0.0.1:8443", false},
		{"127.0.0.1:8443", 2, "127.0.0.1:8445", false},
		{"[::1]:9000", 1, "[::1]:9001", false},
		{"localhost:https", 0, "localhost:https", false},
		{"localhost:https", 1, "", true},
		{"nonsense", 1, "", true},
	} {
		got, err := nthAddr(tc.listen, tc.i)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("nthAddr(%q, %d) = %q, %v; want %q (error %v)", tc.listen, tc.i, got, err, tc.want, tc.err)
		}
	}
}
