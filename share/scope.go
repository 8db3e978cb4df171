package share

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// ScopeOf is the scope of the workspace at root: the normalised URL of its
// git remote "origin" (host/path, without scheme, user, port and ".git",
// lower-case host), so that every clone of one repository has the same.
//
// A repository without a remote is named by its first commit
// ("git:<hash>"), which every clone and copy of it shares.
func ScopeOf(root string) (string, error) {
	out, err := exec.Command("git", "-C", root, "remote", "get-url", "origin").Output()
	if err == nil && strings.TrimSpace(string(out)) != "" {
		return NormalizeRemote(strings.TrimSpace(string(out))), nil
	}
	out, err = exec.Command("git", "-C", root, "rev-list", "--max-parents=0", "HEAD").Output()
	if roots := strings.Fields(string(out)); err == nil && len(roots) > 0 {
		slices.Sort(roots)
		return "git:" + roots[0], nil
	}
	return "", fmt.Errorf("share: %s has no git remote \"origin\" nor commit to name the repository its memory is shared for: give a name with --scope", root)
}

// NormalizeRemote turns the forms of one remote into one name:
// git@github.com:acme/app.git, https://user@github.com/acme/app and
// ssh://git@github.com:22/acme/app.git all become github.com/acme/app.
func NormalizeRemote(u string) string {
	s := strings.TrimSpace(u)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else if i := strings.Index(s, ":"); i > 0 && !strings.Contains(s[:i], "/") {
		s = s[:i] + "/" + s[i+1:] // scp-like: host:path
	}
	if at := strings.Index(s, "@"); at >= 0 && (strings.Index(s, "/") < 0 || at < strings.Index(s, "/")) {
		s = s[at+1:]
	}
	host, path, ok := strings.Cut(s, "/")
	if h, port, found := strings.Cut(host, ":"); found && port != "" && strings.Trim(port, "0123456789") == "" {
		host = h
	}
	s = strings.ToLower(host)
	if ok {
		s += "/" + path
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
	return strings.TrimRight(s, "/")
}
