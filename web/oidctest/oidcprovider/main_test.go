package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRunServesDiscovery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-redirect-uri", "http://127.0.0.1:5173/cb"}, pw)
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	issuer := strings.TrimSpace(strings.TrimPrefix(line, "issuer="))
	resp, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Issuer     string `json:"issuer"`
		EndSession string `json:"end_session_endpoint"`
	}
	json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if d.Issuer != issuer || d.EndSession == "" {
		t.Fatalf("discovery %+v (issuer %q)", d, issuer)
	}
	resp, err = http.PostForm(issuer+"/oidctest/rotate-key", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("control API: %v %v", err, resp)
	}
	resp.Body.Close()

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
}
