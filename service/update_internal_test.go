package service

import (
	"testing"

	"github.com/kpool/kpool"
)

func TestAtProvider(t *testing.T) {
	meta := func(m string) kpool.ControllerStatus {
		return kpool.ControllerStatus{ControllerName: "c", Metadata: []byte(m)}
	}
	tests := []struct {
		name    string
		reports []kpool.ControllerStatus
		want    bool
	}{
		{"no reports", nil, false},
		{"says it does not exist", []kpool.ControllerStatus{meta(`{"exists":false,"failed_generation":1}`)}, false},
		{"says it exists", []kpool.ControllerStatus{meta(`{"exists":true}`)}, true},
		{"says nothing", []kpool.ControllerStatus{meta(`{}`)}, true},
		{"no metadata", []kpool.ControllerStatus{{ControllerName: "c"}}, true},
		{"not a boolean", []kpool.ControllerStatus{meta(`{"exists":"false"}`)}, true},
		{"all say not", []kpool.ControllerStatus{meta(`{"exists":false}`), meta(`{"exists":false}`)}, false},
		{"one of two says nothing", []kpool.ControllerStatus{meta(`{"exists":false}`), meta(`{"active_nodes":0}`)}, true},
	}
	for _, tc := range tests {
		if got := atProvider(tc.reports); got != tc.want {
			t.Errorf("%s: atProvider = %v, want %v", tc.name, got, tc.want)
		}
	}
}
