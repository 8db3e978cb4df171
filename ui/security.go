package ui

import (
	"crypto/subtle"
	"net/http"
	"net/url"
)

// The viewer shows every conversation of the workspace and can forget
// them, so every request passes these checks before any handler runs:
//
//  1. the Host header names the viewer's own address (127.0.0.1:PORT,
//     localhost:PORT): a page of another site that a DNS rebinding points
//     at 127.0.0.1 sends its own host name, and is refused (421);
//  2. the access token: the URL's ?token= (then set as a cookie, HttpOnly
//     and SameSite=Strict, and the token taken out of the address bar by a
//     redirect), or that cookie; none is 401, a wrong one 403;
//  3. a POST also carries the forms' CSRF token, and its Origin (when the
//     browser sends one) is the viewer's own: else 403.
//
// Every answer carries a Content-Security-Policy that allows the viewer's
// own scripts, styles and requests only (no inline script, no external
// resource, no framing), and is not cached.

// contentSecurityPolicy allows nothing but the viewer's own files.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// secure wraps next in the checks above.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make a form's Origin "null"
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !s.hosts[r.Host] {
			s.refuse(w, http.StatusMisdirectedRequest, "This viewer answers only at its own address ("+s.addr+"), not as "+r.Host+".")
			return
		}
		if t := r.URL.Query().Get("token"); t != "" {
			if !equal(t, s.token) {
				s.refuse(w, http.StatusForbidden, "Wrong access token: open the address that 'continuity ui' printed (its first line).")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			// The token leaves the address bar (and the history).
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(s.cookie)
		switch {
		case err != nil:
			s.refuse(w, http.StatusUnauthorized, "This viewer needs its access token: open the address that 'continuity ui' printed (its first line).")
			return
		case !equal(c.Value, s.token):
			s.refuse(w, http.StatusForbidden, "Wrong access token: open the address that 'continuity ui' printed (its first line).")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !s.sameOrigin(r) || !equal(r.PostFormValue("csrf"), s.csrf) {
				s.refuse(w, http.StatusForbidden, "This request did not come from the viewer's own form (missing or wrong CSRF token): nothing was changed.")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether a state-changing request comes from the
// viewer's own pages, when the browser says where it comes from.
func (s *Server) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Scheme == "http" && s.hosts[u.Host] && u.Host == r.Host
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// refuse answers a refused request with a short plain page.
func (s *Server) refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(http.StatusText(code) + ": " + msg + "\n"))
}
