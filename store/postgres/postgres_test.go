package postgres_test

import (
	"testing"

	"github.com/kpool/kpool/store/storetest"
)

func TestConformance(t *testing.T) { storetest.Run(t, storetest.Postgres) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, storetest.Postgres) }
