package redact

import (
	"math/rand/v2"
	"strings"
)

// Examples returns, for every built-in pattern name, a short text holding
// one fake secret of that kind, deterministic from run to run. Tests use
// them as a corpus (TestExamplesCoverEveryPattern keeps it complete): the
// index's tests check that each is redacted before storage and before
// embedding. The secrets are assembled at run time so that the source
// holds nothing a secret scanner would flag.
func Examples() map[string]string {
	rng := rand.New(rand.NewPCG(42, 7))
	const (
		alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		upperD = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		b64url = alnum + "-_"
	)
	// rnd draws n characters of alphabet, mixing cases and digits where the
	// alphabet has them (some patterns require the mix).
	rnd := func(alphabet string, n int) string {
		for {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			s := string(b)
			up := strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || !strings.Contains(alphabet, "A")
			lo := strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") || !strings.Contains(alphabet, "a")
			dg := strings.ContainsAny(s, "0123456789") || !strings.Contains(alphabet, "0")
			if up && lo && dg {
				return s
			}
		}
	}
	pemBody := rnd(alnum+"+/", 64) + "\n" + rnd(alnum+"+/", 64) + "\n" + rnd(alnum+"+/", 20) + "=="
	return map[string]string{
		"private-key":           "my key:\n-----BEGIN RSA PRIV" + "ATE KEY-----\n" + pemBody + "\n-----END RSA PRIV" + "ATE KEY-----\nthanks",
		"jwt":                   "token is ey" + "J" + rnd(b64url, 30) + ".ey" + "J" + rnd(b64url, 60) + "." + rnd(b64url, 43) + ", expires soon",
		"anthropic-key":         "ANTHROPIC_API_KEY=sk" + "-ant-api03-" + rnd(b64url, 93) + "AA claude",
		"openai-key":            "use sk" + "-" + rnd(alnum, 48) + " here",
		"github-token":          "git clone with gh" + "p_" + rnd(alnum, 36) + " please",
		"gitlab-token":          "PRIVATE-TOKEN: gl" + "pat-" + rnd(b64url, 20),
		"slack-token":           "bot xo" + "xb-1234567890-1234567890123-" + rnd(alnum, 24) + ".",
		"slack-webhook":         "post to https://hooks.slack.com/services/" + rnd(upperD, 9) + "/" + rnd(upperD, 11) + "/" + rnd(alnum, 24) + " now",
		"stripe-key":            "stripe.api_key = 'sk" + "_live_" + rnd(alnum, 24) + "'",
		"google-api-key":        "?key=AI" + "za" + rnd(b64url, 35) + "&q=1",
		"aws-access-key-id":     "aws_access_key_id = AK" + "IA" + rnd(upperD, 16) + "\n",
		"aws-secret-access-key": "aws_secret_access_key = " + rnd(alnum+"+/", 40) + "\nregion",
		"npm-token":             "//registry.npmjs.org/:_authToken=np" + "m_" + rnd(alnum, 36),
		"pypi-token":            "password = py" + "pi-AgEIcHlwaS5vcmc" + rnd(b64url, 60),
		"huggingface-token":     "HF_TOKEN=h" + "f_" + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34),
		"sendgrid-key":          "key S" + "G." + rnd(b64url, 22) + "." + rnd(b64url, 43),
		"url-password":          "DATABASE_URL=postgres://app:" + rnd(alnum, 14) + "@db.internal:5432/app",
		"authorization-header":  "curl -H 'Authorization: Bearer " + rnd(b64url, 40) + "' https://api",
		"bearer-token":          "the bearer " + rnd(b64url, 40) + " expired",
		"secret-assignment":     "DB_PASSWORD=" + rnd(alnum, 14) + "x9\nnext",
		"password-assignment":   `password: "Summer` + "2024!" + `"`,
	}
}
