package store

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string
		want  []int  // versions, in order
		err   string // "" for no error
	}{
		{"none", nil, nil, ""},
		{"in order", []string{"0002_b.sql", "0001_a.sql", "0003_c.sql"}, []int{1, 2, 3}, ""},
		{"gap", []string{"0001_a.sql", "0003_c.sql"}, nil, "0003_c.sql: want version 2"},
		{"duplicate", []string{"0001_a.sql", "0001_b.sql"}, nil, "0001_b.sql: want version 2"},
		{"not from one", []string{"0002_b.sql"}, nil, "want version 1"},
		{"bad name", []string{"0001_A.sql"}, nil, "name is not NNNN_name.sql"},
		{"not sql", []string{"0001_a.txt"}, nil, "name is not NNNN_name.sql"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"m": &fstest.MapFile{Mode: fs.ModeDir | 0o755}}
			for _, f := range tt.files {
				fsys["m/"+f] = &fstest.MapFile{Data: []byte("-- " + f)}
			}
			ms, err := LoadMigrations(fsys, "m")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
				if m.SQL != "-- "+m.Name {
					t.Errorf("%s: SQL %q, want the file's", m.Name, m.SQL)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("versions %v, want %v", got, tt.want)
			}
		})
	}
}
