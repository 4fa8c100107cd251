package apply

import (
	"strings"
	"testing"
)

// TestRead: the documents of a file, as YAML documents or JSON lists, and
// every document at fault named in one error.
func TestRead(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		data string
		want []string // each pool's name and cluster, "name@cluster"
		err  string   // in the error, when the file is at fault
	}{
		{name: "one pool", data: "name: web\ncluster: prod\nspec: {nodeCount: 1}\n", want: []string{"web@prod"}},
		{name: "documents, comments and empty ones",
			data: "name: web\ncluster: prod\n---\n# only a comment\n---\n\n---\nname: batch\ncluster_id: c1\n",
			want: []string{"web@prod", "batch@c1"}},
		{name: "a separator first", data: "---\nname: web\n---\nname: batch\n", want: []string{"web@", "batch@"}},
		{name: "a comment after a separator", data: "name: web\n--- # the next\nname: batch\n", want: []string{"web@", "batch@"}},
		{name: "CRLF line ends", data: "name: web\r\n---\r\nname: batch\r\n", want: []string{"web@", "batch@"}},
		{name: "a list in a document", data: "- name: a\n- name: b\n---\nname: c\n", want: []string{"a@", "b@", "c@"}},
		{name: "JSON", data: `{"name": "web", "cluster": "prod", "spec": {"nodeCount": 1}}`, want: []string{"web@prod"}},
		{name: "a JSON list", data: `[{"name": "a"}, {"name": "b", "cluster_id": "c1"}]`, want: []string{"a@", "b@c1"}},
		{name: "a get -o yaml", data: "id: 0b1f4c2e-0000-4000-8000-000000000001\nname: web\ncluster_id: c1\nspec: {}\n", want: []string{"web@c1"}},

		{name: "a list -o yaml", data: "nodepools:\n- name: a\n  cluster_id: c1\n  generation: 3\n  resource_version: abc\n  status: {phase: Ready}\n  created_at: 2026-01-02T03:04:05Z\n- name: b\n  cluster_id: c2\ntotal: 2\nlimit: 50\noffset: 0\n",
			want: []string{"a@c1", "b@c2"}},
		{name: "a list with more than a page", data: "nodepools: []\nitems: []\n", err: "document 1: items: unknown field: a list holds nodepools"},
		{name: "a list's pool at fault", data: "nodepools:\n- name: a\n  spek: {}\n", err: "document 1[0]: spek: unknown field"},
		{name: "nodepools not a list", data: "nodepools: {name: a}\n", err: "document 1: nodepools: must be a list"},
		{name: "an unknown field", data: "name: a\nspek: {}\n", err: "pools.yaml: Validation failed: document 1: spek"},
		{name: "every document at fault", data: "name: a\nspek: {}\n---\nname: ok\n---\nname: [b]\n",
			err: "document 1: spek: unknown field; document 3: name: "},
		{name: "in a list", data: "- name: a\n- nodeCount: 1\n", err: "document 1[1]: nodeCount"},
		{name: "not YAML", data: "name: [a\n", err: "document 1: not YAML or JSON"},
		{name: "more than a comment after a separator", data: "name: a\n--- name: b\n", err: "document 1: not YAML or JSON: invalid Yaml document separator: name: b"},
		{name: "no pools", data: "# nothing\n---\n", err: "pools.yaml has no node pools"},
		{name: "nothing", data: "", err: "pools.yaml has no node pools"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Read([]byte(tt.data), "pools.yaml")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				name, cluster := "", d.Cluster
				if d.Name != nil {
					name = *d.Name
				}
				if d.ClusterID != nil {
					cluster += *d.ClusterID
				}
				got = append(got, name+"@"+cluster)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
