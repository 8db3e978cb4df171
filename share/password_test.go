package share

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemberPassword(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(pass, []byte("127.0.0.1:5432:team:owner:ownerpw\n127.0.0.1:5432:team:newbie:from-pgpass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const url = "postgres://owner@127.0.0.1:5432/team"
	for _, tc := range []struct {
		name, url, file, member, envPG, want string
		err                                  bool
	}{
		{name: "a 0600 file", url: url, file: file, want: "from-file"},
		{name: "a file others read", url: url, file: open, err: true},
		{name: "the environment", url: url, member: "from-env", want: "from-env"},
		{name: "PGPASSFILE", url: url, want: "from-pgpass"},
		{name: "PGPASSWORD beside an owner's URL password", url: "postgres://other:" + "pw" + "@10.0.0.1:5432/x", envPG: "from-envPG", want: "from-envPG"},
		{name: "PGPASSWORD is the owner's", url: "postgres://other@10.0.0.1:5432/x", envPG: "owners", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGPASSFILE", pass)
			t.Setenv("CONTINUITY_MEMBER_PASSWORD", tc.member)
			t.Setenv("PGPASSWORD", tc.envPG)
			got, _, err := MemberPassword(tc.url, "newbie", tc.file)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("got %q, %v; want %q (error: %v)", got, err, tc.want, tc.err)
			}
		})
	}
}
