package main

import (
	"strings"
	"testing"

	"github.com/kpool/kpool/store/testdb"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"sqlite:/var/lib/kpool/kpool.db", "sqlite:/var/lib/kpool/kpool.db"},
		{"postgres://kpool@db:5432/kpool", "postgres://kpool@db:5432/kpool"},
		{"postgres://kpool:s3cret@db:5432/kpool", "postgres://kpool:xxxxx@db:5432/kpool"},
		{"postgres://kpool@db/kpool?password=s3cret&sslmode=require", "postgres://kpool@db/kpool?password=xxxxx&sslmode=require"},
		{"postgresql://db/kpool?user=k&PassWord=s3cret", "postgresql://db/kpool?PassWord=xxxxx&user=k"},
		{"postgres://db/kpool?sslpassword=s3cret&sslkey=/k", "postgres://db/kpool?sslkey=%2Fk&sslpassword=xxxxx"},
		{"postgres://u:p@db/kpool?password=s3cret", "postgres://u:xxxxx@db/kpool?password=xxxxx"},
		{"host=db user=kpool password=s3cret dbname=kpool", "host=db user=kpool password=xxxxx dbname=kpool"},
		{"host=db password = 's3 cr\\'et' dbname=kpool", "host=db password = xxxxx dbname=kpool"},
		{"host=db sslpassword=s3cret", "host=db sslpassword=xxxxx"},
		{"postgres://u:s3cret@db:bad port/kpool", "postgres://(unparsable, hidden)"},
	} {
		got := redact(c.in)
		if got != c.want {
			t.Errorf("redact(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "s3") {
			t.Errorf("redact(%q) = %q still shows the password", c.in, got)
		}
	}
}

// TestMigrateHidesPassword runs kpool migrate on PostgreSQL with a password
// in the URL's query (trust authentication ignores it) and checks its output,
// and an error's, for it.
func TestMigrateHidesPassword(t *testing.T) {
	const secret = "hunter2-in-the-query"
	url := testdb.PostgresSchema(t) + "&password=" + secret
	out, errOut, err := execute("", "migrate", "--database", url)
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut)
	}
	if strings.Contains(out+errOut, secret) || !strings.Contains(out, "password=xxxxx") {
		t.Errorf("migrate printed %q (stderr %q): want the password masked", out, errOut)
	}
	_, errOut, err = execute("", "migrate", "--database", "mysql://u@db/kpool?password="+secret)
	if err == nil || strings.Contains(err.Error()+errOut, secret) {
		t.Errorf("migrate on a bad URL: %v %q: want an error without the password", err, errOut)
	}
}
