package kpool

import (
	"encoding/json"
	"testing"
	"time"
)

func TestRawNodePoolJSON(t *testing.T) {
	at := time.Date(2026, 11, 23, 5, 6, 7, 891011000, time.UTC)
	later := at.Add(time.Hour)
	pools := []RawNodePool{
		{ID: "0197c5a2-0000-7000-8000-000000000001", Name: "workers", ClusterID: "c", Generation: 3, ResourceVersion: "abc",
			Spec: json.RawMessage(`{"nodeCount":3}`), Status: json.RawMessage(`{"phase":"Ready"}`), CreatedAt: at, UpdatedAt: later,
			CreatedBy: "alice@example.com", ProviderName: "workers"},
		{ID: "x", Name: `a"b\c<d>&e` + "\u2028\u2029\x00\x1f\t\n\r\b\f" + "é中\xff", CreatedAt: at, UpdatedAt: at, DeletionTimestamp: &later,
			Spec: json.RawMessage(`{}`), Status: json.RawMessage(`{"conditions":[]}`), CreatedBy: "o'brien+test@example.com"},
		{ID: "y", Name: "no spec"}, // zero values: null spec and status, zero times
		{ID: "z", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
	}
	for _, p := range pools {
		want, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
	}
}
