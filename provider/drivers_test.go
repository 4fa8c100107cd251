package provider_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kpool/kpool"
	. "github.com/kpool/kpool/provider"
)

func TestKindOfStatus(t *testing.T) {
	for status, want := range map[int]Kind{
		429: KindThrottled, 404: KindNotFound, 400: KindValidation, 401: KindPermissionDenied, 403: KindPermissionDenied,
		409: KindTransient, 412: KindTransient, 500: KindTransient, 503: KindTransient,
	} {
		if got := KindOfStatus(status); got != want {
			t.Errorf("KindOfStatus(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"7": 7 * time.Second, "": 0, "soon": 0, "-3": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := RetryAfterHeader(h, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

func TestSpreadCount(t *testing.T) {
	got := SpreadCount(7, []string{"1", "2", "3"})
	if got["1"] != 3 || got["2"] != 2 || got["3"] != 2 {
		t.Errorf("7 over 3 zones: %v", got)
	}
	if SpreadCount(3, nil) != nil {
		t.Error("a pool without zones has a split")
	}
}

func TestSameMetadata(t *testing.T) {
	want := map[string]string{"team": "a"}
	if !SameLabels(map[string]string{"team": "a", "cloud/own": "x"}, want, "cloud/own") ||
		SameLabels(map[string]string{"team": "a", "extra": "x"}, want) || SameLabels(map[string]string{}, want) {
		t.Error("SameLabels")
	}
	a := kpool.Taint{Key: "a", Effect: kpool.EffectNoSchedule}
	b := kpool.Taint{Key: "b", Value: "1", Effect: kpool.EffectNoExecute}
	if !SameTaints([]kpool.Taint{a, b}, []kpool.Taint{b, a}) || SameTaints([]kpool.Taint{a}, []kpool.Taint{b}) {
		t.Error("SameTaints")
	}
	if !SameMap(nil, map[string]string{}) || SameMap(map[string]string{"k": ""}, map[string]string{"j": ""}) {
		t.Error("SameMap")
	}
}
