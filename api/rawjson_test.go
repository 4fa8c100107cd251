package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

func TestRawNodePoolJSON(t *testing.T) {
	at := time.Date(2026, 11, 23, 5, 6, 7, 891011000, time.UTC)
	later := at.Add(time.Hour)
	pools := []kpool.RawNodePool{
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
		if got := appendPool(nil, &p); string(got) != string(want) {
			t.Errorf("appendPool\n got %s\nwant %s", got, want)
		}
	}
}

// TestRawNodePoolParity: RawNodePool keeps every field of NodePool, with
// the same name, JSON key and type (spec and status as stored JSON), and a
// pool with every field set reads back whole through appendPool and Decode.
// A field added to NodePool alone fails here instead of vanishing from GET.
func TestRawNodePoolParity(t *testing.T) {
	pt, rt := reflect.TypeFor[kpool.NodePool](), reflect.TypeFor[kpool.RawNodePool]()
	if pt.NumField() != rt.NumField() {
		t.Fatalf("NodePool has %d fields, RawNodePool %d", pt.NumField(), rt.NumField())
	}
	raw := reflect.TypeFor[json.RawMessage]()
	for i := range pt.NumField() {
		pf, rf := pt.Field(i), rt.Field(i)
		want := pf.Type
		if pf.Name == "Spec" || pf.Name == "Status" {
			want = raw
		}
		if pf.Name != rf.Name || pf.Tag.Get("json") != rf.Tag.Get("json") || rf.Type != want {
			t.Errorf("field %d: NodePool %s %s `%s`, RawNodePool %s %s `%s`", i, pf.Name, pf.Type, pf.Tag, rf.Name, rf.Type, rf.Tag)
		}
	}

	// Every field of the pool set, through reflection so that a new one is too.
	var p kpool.NodePool
	at := time.Date(2026, 11, 26, 3, 4, 5, 6, time.UTC)
	pv := reflect.ValueOf(&p).Elem()
	for i := range pv.NumField() {
		switch f := pv.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(pt.Field(i).Name + "-value")
		case reflect.Int64:
			f.SetInt(int64(7 + i))
		case reflect.Struct, reflect.Pointer:
			// times and the spec and status below
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", pt.Field(i).Name, f.Kind())
		}
	}
	n := 3
	p.Spec = kpool.NodePoolSpec{NodeCount: &n, Zones: []string{"1"}}
	p.Status = kpool.NodePoolStatus{Phase: kpool.PhaseReady, ObservedGeneration: 2, LastUpdateTime: at}
	p.CreatedAt, p.UpdatedAt, p.DeletionTimestamp = at, at.Add(time.Second), &at
	for i := range pv.NumField() {
		if pv.Field(i).IsZero() {
			t.Fatalf("field %s left unset", pt.Field(i).Name)
		}
	}

	r := kpool.RawNodePool{}
	rv := reflect.ValueOf(&r).Elem()
	for i := range pv.NumField() {
		switch name := pt.Field(i).Name; name {
		case "Spec", "Status":
			b, _ := json.Marshal(pv.Field(i).Interface())
			rv.Field(i).Set(reflect.ValueOf(json.RawMessage(b)))
		default:
			rv.Field(i).Set(pv.Field(i))
		}
	}
	want, _ := json.Marshal(&p)
	if got := appendPool(nil, &r); string(got) != string(want) {
		t.Errorf("appendPool\n got %s\nwant %s", got, want)
	}
	back, err := r.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, p) {
		t.Errorf("Decode\n got %+v\nwant %+v", *back, p)
	}
}
