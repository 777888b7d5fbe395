package toolserver

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestTheBearerTokenGoesOnlyToTheServersHost(t *testing.T) {
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "other:"+r.Header.Get("Authorization"))
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "home:"+r.Header.Get("Authorization"))
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	host := home.Listener.Addr().String()
	c := &http.Client{Transport: headerTransport{base: http.DefaultTransport, host: host, bearer: "s3cret"}}
	resp, err := c.Get(home.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !slices.Equal(seen, []string{"home:Bearer s3cret", "other:"}) {
		t.Errorf("requests = %q", seen)
	}
}

func TestAURLKeepsItsSecretsOutOfProblems(t *testing.T) {
	c := ServerConfig{Name: "z", URL: "https://hooks.example.com/s/abc123secret/mcp?api_key=k"}
	if got := c.place(); got != "https://hooks.example.com" {
		t.Errorf("place = %q", got)
	}
	err := c.scrub(errTest("Post " + c.URL + ": connection refused"))
	if err.Error() != "Post https://hooks.example.com: connection refused" {
		t.Errorf("scrubbed = %q", err)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestToolNamesStayApartAndWithinLimits(t *testing.T) {
	long := "a_tool_with_a_name_long_enough_to_pass_the_limit_of_sixty_four_characters"
	names := map[string]string{
		"plain":   toolName("files", "read_file"),
		"dotted":  toolName("files", "read.file"),
		"cleaned": toolName("files", "read_file."),
		"long1":   toolName("files", long+"_1"),
		"long2":   toolName("files", long+"_2"),
	}
	if names["plain"] != "files__read_file" {
		t.Errorf("plain = %q", names["plain"])
	}
	seen := map[string]bool{}
	for k, n := range names {
		if len(n) > 64 || seen[n] {
			t.Errorf("%s: %q is too long or taken", k, n)
		}
		seen[n] = true
	}
}
