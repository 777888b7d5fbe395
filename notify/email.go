package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"html"
	stdmime "mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// SMTP is the server emails go through ([smtp] in the config file).
type SMTP struct {
	Host string
	Port int
	// Username and Password sign in (PLAIN), over TLS only unless the host is loopback.
	Username, Password string
	// From is the sender, "Parley <parley@example.com>".
	From string
	// TLS is "starttls" (the default on port 587 and others), "tls" (port 465: TLS from the
	// start) or "none" (a relay on a trusted network).
	TLS string
}

// Check says what is wrong with the settings.
func (s SMTP) Check() error {
	switch {
	case s.Host == "":
		return fmt.Errorf("host is required")
	case s.Port <= 0 || s.Port > 65535:
		return fmt.Errorf("port %d is not a port", s.Port)
	case s.TLS != "" && s.TLS != "starttls" && s.TLS != "tls" && s.TLS != "none":
		return fmt.Errorf("tls is starttls, tls or none, not %q", s.TLS)
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		return fmt.Errorf("from %q is not an address: %v", s.From, err)
	}
	return nil
}

func (n *Notifier) email(ctx context.Context, d domain.Notification) error {
	s := n.opts.SMTP
	if s == nil {
		return permanent{fmt.Errorf("no SMTP server is configured ([smtp] in the config file)")}
	}
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return permanent{fmt.Errorf("the sender %q is not an address", s.From)}
	}
	msg, err := n.message(d, from)
	if err != nil {
		return permanent{err}
	}
	return n.sendMail(ctx, from, d.Channel.Target, msg)
}

// Confirm mails to the address the link that confirms it as a channel (see
// store.ConfirmToken): nothing else goes to an address before it is followed.
func (n *Notifier) Confirm(ctx context.Context, to, link string) error {
	s := n.opts.SMTP
	if s == nil {
		return fmt.Errorf("no SMTP server is configured ([smtp] in the config file)")
	}
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return fmt.Errorf("the sender %q is not an address", s.From)
	}
	text := "Someone (most likely you) asked Parley to send word of questions to " + to + ".\n\n" +
		"To confirm, open this link and press Confirm, within a day:\n" + link + "\n\n" +
		"If it was not you, do nothing: without the confirmation, Parley sends nothing to this address.\n"
	var b [12]byte
	rand.Read(b[:])
	var m bytes.Buffer
	fmt.Fprintf(&m, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <confirm.%s@%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
		from.String(), to, "Parley: confirm this address", time.Now().Format(time.RFC1123Z), hex.EncodeToString(b[:8]), n.host())
	qp := quotedprintable.NewWriter(&m)
	qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n")))
	qp.Close()
	return n.sendMail(ctx, from, to, m.Bytes())
}

// host is the public address's host name, for Message-IDs ("parley" when there is none).
func (n *Notifier) host() string {
	if u, err := url.Parse(n.opts.BaseURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "parley"
}

// sendMail sends msg to one address through the configured SMTP server.
func (n *Notifier) sendMail(ctx context.Context, from *mail.Address, to string, msg []byte) error {
	s := n.opts.SMTP
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var conn net.Conn
	var err error
	if s.TLS == "tls" {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: &tls.Config{ServerName: s.Host}}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("the SMTP server could not be reached: %v", err)
	}
	conn.SetDeadline(time.Now().Add(time.Minute))
	// Parley stopping ends the conversation with the server at once.
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("SMTP: %v", err)
	}
	defer c.Close()
	if s.TLS == "" || s.TLS == "starttls" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fmt.Errorf("SMTP: the server does not offer STARTTLS (set tls = \"none\" for a relay on a trusted network)")
		}
		if err := c.StartTLS(&tls.Config{ServerName: s.Host}); err != nil {
			return fmt.Errorf("SMTP STARTTLS: %v", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host)); err != nil {
			return permanent{fmt.Errorf("SMTP sign-in: %v", err)}
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("SMTP MAIL: %v", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("SMTP RCPT: %v", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("SMTP DATA: %v", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("SMTP DATA: %v", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("SMTP DATA: %v", err)
	}
	return c.Quit()
}

// emailHTML is the email's HTML part. Every value is escaped (html.EscapeString): the
// message is an agent's or a person's words, the link the operator's base URL.
func emailHTML(summary, message, deadline, link string) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html><body style=\"font-family: sans-serif; line-height: 1.4\">\n")
	b.WriteString("<p>" + html.EscapeString(summary) + "</p>\n")
	b.WriteString("<blockquote style=\"border-left: 3px solid #ccc; margin: 0; padding-left: 1em; white-space: pre-wrap\">" + html.EscapeString(message) + "</blockquote>\n")
	if deadline != "" {
		b.WriteString("<p>Answer by " + html.EscapeString(deadline) + ".</p>")
	}
	b.WriteString("\n<p><a href=\"" + html.EscapeString(link) + "\">Answer in Parley</a></p>\n")
	b.WriteString("<p style=\"color: #666; font-size: small\">You get this because of a channel set up in Parley. Sign in to answer; the link alone answers nothing.</p>\n</body></html>\n")
	return b.String()
}

// message is the email: plain text and HTML, each quoted-printable.
func (n *Notifier) message(d domain.Notification, from *mail.Address) ([]byte, error) {
	link := n.Link(d.Question)
	deadline := ""
	if !d.Question.Deadline.IsZero() {
		deadline = d.Question.Deadline.UTC().Format("2006-01-02 15:04 UTC")
	}
	text := summary(d) + "\n\n" + strings.TrimSpace(d.Question.Message) + "\n\n"
	if deadline != "" {
		text += "Answer by " + deadline + ".\n\n"
	}
	text += "Answer in Parley: " + link + "\n\nYou get this because of a channel set up in Parley. Sign in to answer; the link alone answers nothing.\n"
	htmlPart := emailHTML(summary(d), strings.TrimSpace(d.Question.Message), deadline, link)
	var b [12]byte
	rand.Read(b[:])
	boundary := "parley-" + hex.EncodeToString(b[:])
	var m bytes.Buffer
	subject := mime("Parley: " + firstLine(summary(d)))
	fmt.Fprintf(&m, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <q%d.%s@%s>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=%q\r\n\r\n",
		from.String(), d.Channel.Target, subject, time.Now().Format(time.RFC1123Z), d.Question.ID, hex.EncodeToString(b[:4]), n.host(), boundary)
	for _, part := range []struct{ kind, body string }{{"text/plain", text}, {"text/html", htmlPart}} {
		fmt.Fprintf(&m, "--%s\r\nContent-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n", boundary, part.kind)
		qp := quotedprintable.NewWriter(&m)
		qp.Write([]byte(strings.ReplaceAll(part.body, "\n", "\r\n")))
		qp.Close()
		m.WriteString("\r\n")
	}
	fmt.Fprintf(&m, "--%s--\r\n", boundary)
	return m.Bytes(), nil
}

// mime encodes a header's words when they are not ASCII.
func mime(s string) string {
	for _, r := range s {
		if r > 127 {
			return stdmime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}
