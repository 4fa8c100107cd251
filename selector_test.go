package kpool_test

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

func TestSelector(t *testing.T) {
	web := map[string]string{"team": "web", "env": "prod"}
	none := map[string]string{}
	tests := []struct {
		in        string
		web, none bool
		str       string
	}{
		{"", true, true, ""},
		{"team=web", true, false, "team=web"},
		{"team==web", true, false, "team=web"},
		{"team!=web", false, true, "team!=web"},
		{"team=db", false, false, "team=db"},
		{"env in (staging,prod)", true, false, "env in (prod,staging)"},
		{"env notin (prod)", false, true, "env notin (prod)"},
		{"team", true, false, "team"},
		{"!team", false, true, "!team"},
		{"team=web,env=prod", true, false, "env=prod,team=web"},
		{"team=web,!env", false, false, "!env,team=web"},
		{"example.com/tier=a", false, false, "example.com/tier=a"},
	}
	for _, tt := range tests {
		s, err := kpool.ParseSelector("selector", tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if got := s.Matches(web); got != tt.web {
			t.Errorf("%q matches %v = %v, want %v", tt.in, web, got, tt.web)
		}
		if got := s.Matches(none); got != tt.none {
			t.Errorf("%q matches no labels = %v, want %v", tt.in, got, tt.none)
		}
		if s.String() != tt.str {
			t.Errorf("%q String() = %q, want %q", tt.in, s.String(), tt.str)
		}
		again, err := kpool.ParseSelector("selector", s.String())
		if err != nil || again.String() != s.String() {
			t.Errorf("%q does not read back: %v %q", tt.in, err, again.String())
		}
	}
}

func TestSelectorRefused(t *testing.T) {
	for _, in := range []string{"team=", "=web", "team=web,", "bad key=x", "a in (b", "cpu>4", "team=a b"} {
		_, err := kpool.ParseSelector("label_selector", in)
		if in == "team=" { // an empty value is a valid label value
			if err != nil {
				t.Errorf("%q: %v", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "label_selector") {
			t.Errorf("%q: got %v, want an error naming label_selector", in, err)
		}
	}
}
