package redact

import (
	"net/url"
	"slices"
	"strings"
)

// Fragments shared by the rules.
const (
	// quote is an optional quote, JSON-escaped in a raw log line (\").
	quote = `(?:\\?["'])?`
	// assign separates a key from its value: = : := =>, with optional
	// quotes and spaces around (JSON, YAML, env files, code).
	assign = quote + `\s*(?::=|=>|[:=])\s*`
)

// DefaultRules returns the built-in rules, in the order they apply:
// specific token formats first, then URLs and headers, then generic
// assignments. Callers may append their own and pass them to New.
func DefaultRules() []Rule {
	rules := []Rule{
		{
			Name:     "private-key",
			Comment:  "PEM private key block (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP), over several lines; without its END line, the base64 lines that follow",
			Regexp:   `-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----(?:[^"]*?-----END[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{20,})+)`,
			Keywords: []string{"-----BEGIN"},
			MaxLen:   16 << 10,
		},
		{
			Name:      "jwt",
			Comment:   "JSON Web Token: base64url header and payload, both JSON objects ('eyJ'), and signature",
			Regexp:    `eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`,
			Keywords:  []string{"eyJ"},
			WordStart: true,
			MaxLen:    8 << 10,
		},
		{
			Name:      "anthropic-key",
			Comment:   "Anthropic API or admin key: sk-ant-…",
			Regexp:    `sk-ant-[A-Za-z0-9_-]{20,}`,
			Keywords:  []string{"sk-ant-"},
			WordStart: true,
		},
		{
			Name:      "openai-key",
			Comment:   "OpenAI API key: sk-… (legacy), sk-proj-…, sk-svcacct-…, sk-admin-…; random mixed-case letters and digits",
			Regexp:    `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`,
			Keywords:  []string{"sk-"},
			WordStart: true,
			Check:     only(mixedCase),
		},
		{
			Name:      "github-token",
			Comment:   "GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens: ghp_ gho_ ghu_ ghs_ ghr_",
			Regexp:    `gh[pousr]_[A-Za-z0-9]{36,}`,
			Keywords:  []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
			WordStart: true,
		},
		{
			Name:      "github-token",
			Comment:   "GitHub fine-grained personal access token: github_pat_…",
			Regexp:    `github_pat_[A-Za-z0-9_]{22,}`,
			Keywords:  []string{"github_pat_"},
			WordStart: true,
		},
		{
			Name:      "gitlab-token",
			Comment:   "GitLab personal, project/group, deploy, runner, trigger and feed tokens: glpat- glptt- gldt- glrt- glsoat- glffct-",
			Regexp:    `gl(?:pat|ptt|dt|rt|soat|ffct)-[A-Za-z0-9_-]{20,}`,
			Keywords:  []string{"glpat-", "glptt-", "gldt-", "glrt-", "glsoat-", "glffct-"},
			WordStart: true,
		},
		{
			Name:      "slack-token",
			Comment:   "Slack bot, user, app, legacy and refresh tokens: xoxb- xoxp- xoxa- xoxo- xoxs- xoxr-",
			Regexp:    `xox[abposr]-[A-Za-z0-9-]{10,}`,
			Keywords:  []string{"xox"},
			WordStart: true,
		},
		{
			Name:      "slack-token",
			Comment:   "Slack app-level token: xapp-<n>-…",
			Regexp:    `xapp-[0-9]-[A-Za-z0-9-]{10,}`,
			Keywords:  []string{"xapp-"},
			WordStart: true,
		},
		{
			Name:     "slack-webhook",
			Comment:  "Slack incoming webhook or workflow URL: the path after hooks.slack.com/services/ (or workflows/, triggers/) is the secret",
			Regexp:   `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})`,
			Keywords: []string{"hooks.slack.com/"},
		},
		{
			Name:      "stripe-key",
			Comment:   "Stripe live secret or restricted key: sk_live_… rk_live_…",
			Regexp:    `[sr]k_live_[A-Za-z0-9]{20,}`,
			Keywords:  []string{"sk_live_", "rk_live_"},
			WordStart: true,
		},
		{
			Name:      "google-api-key",
			Comment:   "Google API key: AIza followed by 35 characters",
			Regexp:    `AIza[A-Za-z0-9_-]{35}`,
			Keywords:  []string{"AIza"},
			WordStart: true,
		},
		{
			Name:      "aws-access-key-id",
			Comment:   "AWS access key id: AKIA (long-term), ASIA (temporary), ABIA, ACCA, then 16 upper-case letters or digits",
			Regexp:    `A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}\b`,
			Keywords:  []string{"AKIA", "ASIA", "ABIA", "ACCA"},
			WordStart: true,
		},
		{
			Name:     "aws-secret-access-key",
			Comment:  "AWS secret access key assigned to aws_secret_access_key, AWS_SECRET_KEY, … (40 base64 characters)",
			Regexp:   `aws_?secret_?(?:access_?)?key` + assign + quote + `(?P<secret>[a-z0-9/+]{40})(?:[^a-z0-9/+=]|$)`,
			Keywords: []string{"aws"},
			Fold:     true,
			Check:    only(hasDigit),
		},
		{
			Name:     "aws-secret-access-key",
			Comment:  "AWS secret access key assigned to secret_access_key or SecretAccessKey (credentials files, STS JSON)",
			Regexp:   `secret_?access_?key` + assign + quote + `(?P<secret>[a-z0-9/+]{40})(?:[^a-z0-9/+=]|$)`,
			Keywords: []string{"secret"},
			Fold:     true,
			Check:    only(hasDigit),
		},
		{
			Name:      "npm-token",
			Comment:   "npm access token: npm_ and 36 letters or digits",
			Regexp:    `npm_[A-Za-z0-9]{36}\b`,
			Keywords:  []string{"npm_"},
			WordStart: true,
		},
		{
			Name:      "pypi-token",
			Comment:   "PyPI API token: pypi-AgE… (a macaroon)",
			Regexp:    `pypi-AgE[A-Za-z0-9_-]{50,}`,
			Keywords:  []string{"pypi-AgE"},
			WordStart: true,
		},
		{
			Name:      "huggingface-token",
			Comment:   "Hugging Face access token: hf_ and 34+ random letters",
			Regexp:    `hf_[A-Za-z0-9]{34,}`,
			Keywords:  []string{"hf_"},
			WordStart: true,
			Check:     only(bothCases),
		},
		{
			Name:      "sendgrid-key",
			Comment:   "SendGrid API key: SG.<22>.<43>",
			Regexp:    `SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`,
			Keywords:  []string{"SG."},
			WordStart: true,
		},
		{
			Name:     "url-password",
			Comment:  "password in a URL, scheme://user:password@host: the user and host are kept",
			Regexp:   `://[^\s:/?#@"'\\<>]*:(?P<secret>[^\s/?#@"'\\<>]+)@[A-Za-z0-9\[]`,
			Keywords: []string{"://"},
			Check:    only(notPlaceholder),
		},
		{
			Name:     "authorization-header",
			Comment:  "credentials of an Authorization header (Bearer, Basic, token, Bot), as HTTP, curl -H, JSON or code",
			Regexp:   `authorization` + assign + quote + `\s*(?:bearer|basic|token|bot)\s+(?P<secret>[a-z0-9._~+/-]{8,}=*)`,
			Keywords: []string{"authorization"},
			Fold:     true,
			MaxLen:   2 << 10,
			Check:    only(credential),
		},
		{
			Name:     "bearer-token",
			Comment:  "a random-looking token after the word Bearer, outside an Authorization header",
			Regexp:   `bearer\s+(?P<secret>[a-z0-9._~+/-]{20,}=*)`,
			Keywords: []string{"bearer"},
			Fold:     true,
			MaxLen:   2 << 10,
			Check:    only(randomValue),
		},
	}
	// Generic assignments of a random-looking value to a key named like a
	// secret: password=…, "api_key": "…", GITHUB_TOKEN=…, clientSecret:
	// '…'. One rule per key word, so that each regexp starts with a literal
	// (fast to find). The key word may be prefixed (db_password,
	// accessToken) and suffixed after a separator (secret_key, token_v2),
	// not by letters (tokenizer, secrets). The value is either quoted, or
	// unquoted right after '=' (env files, flags, query strings) or after
	// ':' (YAML, headers); `key = ident` and `key := f(x)` are code, not
	// secrets. randomValue rejects words, paths, versions and placeholders.
	for _, key := range []string{
		"password", "passwd", "passphrase", "secret", "token",
		"api_key", "api-key", "apikey", "access_key", "access-key", "accesskey",
		"private_key", "private-key", "privatekey",
	} {
		rules = append(rules, Rule{
			Name:    "secret-assignment",
			Comment: "a high-entropy value assigned to a key named " + key,
			Regexp: key + `(?:[_.-][a-z0-9_.-]*)?(?:` +
				assign + `\\?["'](?P<secret>[^\s"'\\]{12,})\\?["']` +
				`|(?:=|:[ \t]*)(?P<secret>[a-z0-9_+/=~!@#$%^*-]{16,})(?:[\s&"'\\#;]|$))`,
			Keywords: []string{key},
			Fold:     true,
			MaxLen:   400,
			Check:    assignment,
		})
	}
	// Passwords are often words ("hunter2", "CorrectHorseBatteryStaple"),
	// which the entropy test above keeps: a value assigned to a key named
	// password, passwd, passphrase or secret is redacted whatever it looks
	// like, in the narrower forms where such an assignment is a value and
	// not code: quoted ('password: "…"', password="…"), unquoted right after
	// '=' and ended by a space, '&', ';', '#', a quote or the end (env files,
	// flags, query strings; not "password=pw," in a call), or unquoted after
	// ':' up to the end of the line (YAML, "my password: …"; not
	// "password: string;"). passwordValue keeps types, literals, code and
	// placeholders. Quoted values with spaces are kept: more often prose
	// than a password.
	for _, key := range []string{"password", "passwd", "passphrase", "secret"} {
		rules = append(rules, Rule{
			Name:    "password-assignment",
			Comment: "any value (not only a random-looking one) assigned to a key named " + key,
			Regexp: key + `(?:[_.-][a-z0-9_.-]*)?(?:` +
				assign + `\\?["'](?P<secret>[^\s"'\\]{4,128})\\?["']` +
				`|=(?P<secret>[^\s"'\\&#;,()\[\]{}<>$]{4,128})(?:[\s&"'\\#;]|$)` +
				`|:[ \t]*(?P<secret>[^\s"'\\,;()\[\]{}<>$]{4,64})[ \t]*(?:\\[nr]|[\r\n]|\\?"|$))`,
			Keywords: []string{key},
			Fold:     true,
			MaxLen:   400,
			Check:    passwordValue,
		})
	}
	return rules
}

// notPasswords are values of a password-named key that are not one: types,
// literals, words of forms and schemas.
var notPasswords = map[string]bool{
	"string": true, "str": true, "text": true, "bool": true, "boolean": true, "int": true,
	"integer": true, "number": true, "required": true, "optional": true, "none": true,
	"null": true, "nil": true, "true": true, "false": true, "undefined": true, "hidden": true,
	"empty": true, "value": true, "input": true, "field": true, "any": true, "object": true,
	"char": true, "bytes": true, "byte": true, "varchar": true, "self": true, "this": true,
	"unknown": true, "unset": true, "default": true, "mask": true, "masked": true,
	"redacted": true, "omitted": true, "test": true, "type": true,
}

// passwordValue checks a value assigned to a key named like a password:
// the key's suffix must not say the value describes one (password_hash),
// and the value must not be a placeholder, a type or literal, or a dotted
// reference to a variable (cfg.Password, self.password).
func passwordValue(secret, match string) bool {
	key := match
	if i := strings.IndexAny(match, "=:\"'\\\t "); i >= 0 {
		key = match[:i]
	}
	for w := range strings.FieldsFuncSeq(strings.ToLower(key), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if notSecretKeys[w] {
			return false
		}
	}
	if !notPlaceholder(secret) || notPasswords[strings.ToLower(secret)] || dottedName(secret) {
		return false
	}
	return true
}

// dottedName reports whether s reads as a qualified identifier: a.b, a.b.c
// (letters, digits, '_' and '$', not starting with a digit).
func dottedName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] >= '0' && p[0] <= '9' {
			return false
		}
		for i := 0; i < len(p); i++ {
			if c := p[i]; !(isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '$') {
				return false
			}
		}
	}
	return true
}

// only adapts a check of the secret alone to Rule.Check.
func only(check func(secret string) bool) func(secret, match string) bool {
	return func(secret, _ string) bool { return check(secret) }
}

// notSecretKeys are words that, in the name of a key, say that its value
// describes a secret rather than holds one: token_type, secret_name,
// private_key_id, password_file, api_key_url.
var notSecretKeys = map[string]bool{
	"type": true, "types": true, "kind": true, "format": true, "name": true, "names": true,
	"id": true, "ids": true, "url": true, "uri": true, "endpoint": true, "path": true,
	"file": true, "dir": true, "env": true, "var": true, "field": true, "header": true,
	"hint": true, "count": true, "len": true, "length": true, "size": true, "limit": true,
	"limits": true, "max": true, "min": true, "ttl": true, "expiry": true, "expires": true,
	"version": true, "hash": true, "policy": true, "prompt": true, "label": true,
}

// assignment checks a value assigned to a key named like a secret: the
// key's suffix must not say the value describes a secret (token_type=…),
// and the value must look generated (randomValue).
func assignment(secret, match string) bool {
	key := match
	if i := strings.IndexAny(match, "=:\"'\\\t "); i >= 0 {
		key = match[:i]
	}
	for w := range strings.FieldsFuncSeq(strings.ToLower(key), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if notSecretKeys[w] {
			return false
		}
	}
	return randomValue(secret)
}

// hasDigit: random 40-character keys nearly always hold a digit;
// placeholders (YOUR_SECRET_ACCESS_KEY_GOES_HERE…) do not.
func hasDigit(s string) bool { return classify(s).digit > 0 }

// mixedCase: a random token of letters and digits has lower and upper case
// letters and digits; a kebab-case name or a placeholder does not.
func mixedCase(s string) bool {
	c := classify(s)
	return c.lower > 0 && c.upper > 0 && c.digit > 0
}

// bothCases: random letters hold lower and upper case.
func bothCases(s string) bool {
	c := classify(s)
	return c.lower > 0 && c.upper > 0
}

// placeholders are values that stand for a secret in documentation.
var placeholders = []string{
	"password", "passwd", "pass", "pwd", "secret", "changeme", "example",
	"your", "placeholder", "redacted", "dummy", "xxxx", "****", "....",
}

// placeholderWords are the words a documentation value is made of around
// a placeholder ("YOUR_PASSWORD_HERE", "replace-with-your-secret",
// "example_api_key"), longest first so that "password" goes before "pass";
// placeholderShort are the short ones, which count only as whole parts
// between separators (the "me" of "set_me", not of "homer42").
var (
	placeholderWords = []string{
		"placeholder", "changeme", "password", "redacted", "example", "replace",
		"passwd", "secret", "actual", "insert", "dummy", "enter", "token", "value",
		"here", "goes", "pass", "your", "with", "real", "xxxx", "****", "....",
	}
	placeholderShort = []string{"api", "db", "key", "pwd", "the", "my", "me", "to", "a", "x", "xx", "xxx"}
)

// notPlaceholder rejects documentation values: "password", "<pass>",
// "${PASSWORD}", "$PASS", "xxxx", "***", "YOUR_SECRET_HERE". A value is a
// placeholder only when it is made of such words alone: one that holds a
// placeholder word beside anything else ("hunter2secret",
// "MyPassword123") is a password that happens to contain a word, and is
// redacted.
func notPlaceholder(s string) bool {
	if s == "" || strings.ContainsAny(s[:1], "$<{[%*") {
		return false
	}
	l := strings.ToLower(s)
	if slices.Contains(placeholders, l) {
		return false
	}
	if !containsAny(l, placeholders) {
		return strings.Trim(l, "x*.") != ""
	}
	rest := l
	for _, w := range placeholderWords {
		rest = strings.ReplaceAll(rest, w, " ")
	}
	for part := range strings.FieldsFuncSeq(rest, func(r rune) bool { return strings.ContainsRune(" -_.*", r) }) {
		if !slices.Contains(placeholderShort, part) {
			return true
		}
	}
	return false
}

// containsAny reports whether s holds one of the placeholders of at least
// four bytes.
func containsAny(s string, words []string) bool {
	for _, p := range words {
		if len(p) >= 4 && strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// credential accepts the credentials of an Authorization header unless
// they are a placeholder (YOUR_TOKEN, xxxxxxxx): a real one holds a digit,
// or both upper- and lower-case letters.
func credential(s string) bool {
	if !notPlaceholder(s) {
		return false
	}
	c := classify(s)
	return c.digit > 0 && c.lower+c.upper > 0 || c.lower > 0 && c.upper > 0
}

// randomValue reports whether a value assigned to a secret-named key
// looks generated: at least 12 bytes, letters and digits, at least 3 bits
// of entropy per byte, not a placeholder, and not made only of words,
// numbers and versions joined by - _ . / : + (bert-base-uncased-v2,
// my_secret_name_2, /path/to/file1).
func randomValue(s string) bool {
	if strings.Contains(s, "%") { // URL-encoded: judge the value
		if u, err := url.QueryUnescape(s); err == nil {
			s = u
		}
	}
	if len(s) < 12 || !notPlaceholder(s) {
		return false
	}
	c := classify(s)
	if c.digit == 0 || c.lower+c.upper == 0 || entropy(s) < 3.0 {
		return false
	}
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return strings.ContainsRune("-_./:+", r) }) {
		if !plainPart(part) {
			return true
		}
	}
	return false
}

// plainPart reports whether part reads as a word, a number or a short
// versioned word: letters only, digits only, letters then up to 3 digits
// (v2, sha256), or at most 3 bytes.
func plainPart(part string) bool {
	if len(part) <= 3 {
		return true
	}
	i := 0
	for i < len(part) && isLetter(part[i]) {
		i++
	}
	if i == 0 { // starts with a digit: plain only if all digits
		for j := 0; j < len(part); j++ {
			if part[j] < '0' || part[j] > '9' {
				return false
			}
		}
		return true
	}
	rest := part[i:]
	if len(rest) > 3 {
		return false
	}
	for j := 0; j < len(rest); j++ {
		if rest[j] < '0' || rest[j] > '9' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
