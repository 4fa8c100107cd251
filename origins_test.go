package kpool

import "testing"

// TestOrigin: endpoints compare on scheme, host and port, whatever their
// spelling; only https origins can be allowed.
func TestOrigin(t *testing.T) {
	allowed, err := ParseOrigins([]string{"https://ARM.example", " https://127.0.0.1:8443/ ", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		endpoint string
		want     bool
	}{
		{"https://arm.example", true},
		{"https://arm.example:443/subscriptions", true},
		{"HTTPS://Arm.Example.", true},
		{"https://127.0.0.1:8443", true},
		{"https://arm.example:8443", false},
		{"http://arm.example", false},
		{"https://arm.example.evil.example", false},
		{"https://evil.example/https://arm.example", false},
		{"https://user@arm.example", false},
		{"https://127.0.0.1", false},
		{"arm.example", false},
	} {
		if got := allowed.Allows(tc.endpoint); got != tc.want {
			t.Errorf("Allows(%q) = %v, want %v", tc.endpoint, got, tc.want)
		}
	}
	for _, bad := range []string{"http://arm.example", "https://arm.example/path", "arm.example", "https://arm.example?x=1"} {
		if _, err := ParseOrigins([]string{bad}); err == nil {
			t.Errorf("ParseOrigins(%q) accepted", bad)
		}
	}
	var none Origins
	if none.Allows("https://arm.example") {
		t.Error("the empty list allows")
	}
}
