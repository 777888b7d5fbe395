package views

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/parley-chat/parley/domain"
)

func renderDevices(t *testing.T, d DevicesData) *html.Node { return parse(t, Devices(d)) }

func TestDevices(t *testing.T) {
	added := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	doc := renderDevices(t, DevicesData{Devices: []domain.Channel{
		{ID: 7, Kind: domain.ChannelPush, Label: "Firefox on Linux", Target: "https://push.example/a", Created: added, LastOK: added.Add(time.Hour)},
		{ID: 9, Kind: domain.ChannelPush, Target: "https://push.example/b", Created: added, LastErrorAt: added.Add(2 * time.Hour), LastError: "410 Gone"},
	}})
	button := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "push-subscribe" })
	if len(button) != 1 || strings.TrimSpace(text(button[0])) != "Notify this device" {
		t.Fatalf("no “Notify this device” button")
	}
	if _, hidden := attr(button[0], "hidden"); !hidden {
		t.Error("the button shows before push.js knows the browser can subscribe")
	}
	status := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "push-status" })
	if len(status) != 1 {
		t.Fatal("no #push-status")
	}
	if r, _ := attr(status[0], "role"); r != "status" {
		t.Errorf("#push-status role = %q", r)
	}
	items := findAll(doc, func(n *html.Node) bool { return n.Data == "li" })
	if len(items) != 2 {
		t.Fatalf("%d devices listed, want 2", len(items))
	}
	for i, want := range []struct{ id, endpoint, says, remove string }{
		{"7", "https://push.example/a", "Firefox on Linux", "Remove Firefox on Linux, added Nov 20 08:00 UTC"},
		{"9", "https://push.example/b", "A device", "Remove the device, added Nov 20 08:00 UTC"},
	} {
		li := items[i]
		if got := text(li); !strings.Contains(got, want.says) {
			t.Errorf("device %d says %q, want %q in it", i, got, want.says)
		}
		inputs := map[string]string{}
		for _, in := range tags(li, "input") {
			name, _ := attr(in, "name")
			inputs[name], _ = attr(in, "value")
		}
		if inputs["id"] != want.id || inputs["endpoint"] != want.endpoint {
			t.Errorf("device %d's form holds %v", i, inputs)
		}
		forms := tags(li, "form")
		if len(forms) != 1 {
			t.Fatalf("device %d has %d forms", i, len(forms))
		}
		if a, _ := attr(forms[0], "action"); a != "/settings/devices/remove" {
			t.Errorf("device %d's form posts to %q", i, a)
		}
		if l, _ := attr(tags(li, "button")[0], "aria-label"); l != want.remove {
			t.Errorf("device %d's button is named %q, want %q", i, l, want.remove)
		}
	}
	if got := text(items[0]); !strings.Contains(got, "Delivered") {
		t.Errorf("a delivered device says %q", got)
	}
	if got := text(items[1]); !strings.Contains(got, "Failed") || !strings.Contains(got, "410 Gone") {
		t.Errorf("a failing device says %q", got)
	}

	none := renderDevices(t, DevicesData{Error: "There is no such device."})
	if got := text(none); !strings.Contains(got, "No device is notified yet.") || !strings.Contains(got, "There is no such device.") {
		t.Errorf("no devices, with an error: %q", got)
	}
}
