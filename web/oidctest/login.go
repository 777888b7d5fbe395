package oidctest

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"
)

const (
	pathLogin          = "/login"
	pathLoggedOut      = "/logged-out"
	queryAuthRequestID = "authRequestID"
)

var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in - oidctest</title></head>
<body>
<h1>Sign in</h1>
<form method="post" action="/login">
  <input type="hidden" name="id" value="{{.ID}}">
  <p><label for="username">Username</label>
     <input id="username" name="username" autocomplete="username" value="{{.Username}}" required autofocus></p>
  <p><label for="password">Password</label>
     <input id="password" name="password" type="password" autocomplete="current-password" required></p>
  {{if .Error}}<p role="alert" id="error">{{.Error}}</p>{{end}}
  <p><button type="submit">Sign in</button></p>
</form>
</body>
</html>
`))

// loginHandler is the login UI: GET /login?authRequestID=... shows the form,
// POST /login checks the password and sends the browser to /authorize/callback,
// which redirects to the client's redirect_uri with the code.
type loginHandler struct {
	storage *storage
	// op.AuthCallbackURL(provider); it reads the issuer from the request
	// context, so the handler must run behind op.NewIssuerInterceptor.
	callbackURL func(context.Context, string) string
}

type loginData struct {
	ID, Username, Error string
}

func (h *loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodGet:
		id := r.URL.Query().Get(queryAuthRequestID)
		if !h.storage.authRequestExists(id) {
			http.Error(w, "unknown or expired sign-in request", http.StatusBadRequest)
			return
		}
		h.render(w, http.StatusOK, loginData{ID: id})
	case http.MethodPost:
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		id, username := r.PostForm.Get("id"), r.PostForm.Get("username")
		if err := h.storage.checkLogin(id, username, r.PostForm.Get("password")); err != nil {
			h.render(w, http.StatusUnauthorized, loginData{ID: id, Username: username, Error: err.Error()})
			return
		}
		http.Redirect(w, r, h.callbackURL(r.Context(), id), http.StatusFound)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *loginHandler) render(w http.ResponseWriter, status int, d loginData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, d)
}

// controlHandler serves the runtime controls over HTTP (Options.ControlAPI), for a
// provider running as its own process. All take a POST form and answer JSON:
//
//	POST /oidctest/groups            username=alice&group=a&group=b   (no group: none)
//	POST /oidctest/rotate-key        keep_old=true|false               -> {"kid": "...", "kids": [...]}
//	POST /oidctest/wrong-audience    audience=x (optional)
//	POST /oidctest/id-token-lifetime client_id=parley&lifetime=-1m     (Go duration)
func controlHandler(p *Provider) http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any, err error) {
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			v = map[string]string{"error": err.Error()}
		}
		_ = json.NewEncoder(w).Encode(v)
	}
	ok := map[string]bool{"ok": true}
	mux.HandleFunc("POST /oidctest/groups", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		groups := r.PostForm["group"]
		if groups == nil {
			groups = []string{}
		}
		reply(w, ok, p.SetUserGroups(r.PostForm.Get("username"), groups))
	})
	mux.HandleFunc("POST /oidctest/rotate-key", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		kid, err := p.RotateKey(strings.EqualFold(r.PostForm.Get("keep_old"), "true"))
		reply(w, map[string]any{"kid": kid, "kids": p.KeyIDs()}, err)
	})
	mux.HandleFunc("POST /oidctest/wrong-audience", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		p.IssueWrongAudienceOnce(r.PostForm["audience"]...)
		reply(w, ok, nil)
	})
	mux.HandleFunc("POST /oidctest/id-token-lifetime", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		d, err := time.ParseDuration(r.PostForm.Get("lifetime"))
		if err == nil {
			err = p.SetIDTokenLifetime(r.PostForm.Get("client_id"), d)
		}
		reply(w, ok, err)
	})
	return mux
}
