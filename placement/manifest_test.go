package placement

import "testing"

// TestUntouchedRoundTrip: documents Place does not change come back byte
// for byte: line endings, separators with comments, leading and trailing
// separators, comment-only documents.
func TestUntouchedRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: a}\r\n",
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # second\n# only a comment\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
		"--- #top\r\napiVersion: v1\r\nkind: Secret\r\nmetadata: {name: s}\r\n---\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: c}\r\n---\r\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no-final-newline}",
	} {
		res, err := Place([]byte(in), Options{DefaultPool: DefaultPool})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if res.Manifests != in {
			t.Errorf("round trip changed the input:\n in  %q\n out %q", in, res.Manifests)
		}
	}
	if _, err := Place([]byte("apiVersion: v1\nkind: ConfigMap\n--- {a: 1}\n"), Options{}); err == nil || !contains(err, "only a comment may follow a document separator") {
		t.Errorf("content after ---: %v", err)
	}
}
