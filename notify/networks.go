package notify

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Networks are the networks besides the public internet that the operator lets channels
// reach (--channel-networks): a Mattermost on the LAN, an ntfy server of the office's, the
// receivers of tests on loopback. Every other address that is not public (loopback, RFC 1918,
// link-local, unique-local, the cloud metadata address, documentation and benchmarking
// ranges, …) is refused, so that a signed-in person cannot make Parley post into the
// network it runs in.
type Networks []netip.Prefix

// ParseNetworks reads a comma-separated list of CIDR prefixes ("10.1.0.0/16,127.0.0.1/32");
// a bare address is its own /32 or /128.
func ParseNetworks(s string) (Networks, error) {
	var out Networks
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("channel network %q is not an address or a CIDR prefix", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("channel network %q is not a CIDR prefix such as 10.0.0.0/8", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (n Networks) String() string {
	s := make([]string, len(n))
	for i, p := range n {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// specialRanges are the addresses that are not the public internet, besides those netip
// names (loopback, private, link-local, multicast, unspecified): IANA's special-purpose
// registries, and the IPv6 forms that carry an IPv4 address inside.
var specialRanges = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16", "fec0::/10",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// nat64 and sixToFour are the IPv6 forms that carry an IPv4 address (RFC 6052's well-known
// prefix, RFC 3056): the address inside is the one to judge.
var nat64, sixToFour = netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")

// Special says whether a is not a public internet address, and what it is.
func Special(a netip.Addr) (string, bool) {
	a = a.Unmap().WithZone("") // a zone changes nothing of where a global address leads
	switch b := a.As16(); {
	case nat64.Contains(a):
		return Special(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		return Special(netip.AddrFrom4([4]byte(b[2:6])))
	}
	switch {
	case a.IsLoopback():
		return "a loopback", true
	case a.IsPrivate():
		return "a private", true
	case a.IsLinkLocalUnicast():
		return "a link-local", true
	case a.IsUnspecified():
		return "an unspecified", true
	case a.IsMulticast():
		return "a multicast", true
	}
	for _, p := range specialRanges {
		if p.Contains(a) {
			return "a reserved", true
		}
	}
	return "", false
}

// listed says whether the operator listed a's network.
func (n Networks) listed(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range n {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Check says why a may not be reached, if so: a special address the operator did not list,
// or, when listedOnly (a plain http:// push endpoint), any address they did not list.
func (n Networks) Check(a netip.Addr, listedOnly bool) error {
	if n.listed(a) {
		return nil
	}
	what, special := Special(a)
	switch {
	case special:
		return &RefusedError{Addr: a.Unmap().WithZone(""), What: what}
	case listedOnly:
		return &RefusedError{Addr: a.Unmap().WithZone(""), What: "not a listed network's"}
	}
	return nil
}

// RefusedError is an address the network rule refuses.
type RefusedError struct {
	Addr netip.Addr
	What string
	// ByName says the URL named a host that resolved to Addr: the error does not say the
	// address, so that the page does not map the network's names for whoever typed them.
	ByName bool
}

func (e *RefusedError) Error() string {
	if e.ByName {
		return fmt.Sprintf("its name leads to %s address, which Parley does not send to unless the operator allows its network (--channel-networks)", e.What)
	}
	return fmt.Sprintf("%s is %s address, which Parley does not send to unless the operator allows its network (--channel-networks)", e.Addr, e.What)
}

// CheckURL checks a channel's URL by its form, as it is saved: an address written in it (or
// localhost) must be one the rule allows, and a push endpoint is https:// unless it is in a
// listed network. A name is checked where it leads at each delivery (Client).
func (n Networks) CheckURL(raw string, push bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // leads nowhere: what a URL must look like is domain.CheckChannel's to say
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	plain := push && u.Scheme == "http"
	addrs := []netip.Addr{}
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, a)
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		addrs = append(addrs, netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback())
	} else if a, ok := oddIPv4(host); ok {
		addrs = append(addrs, a)
	} else if plain {
		return fmt.Errorf("a push endpoint is https://, or http:// at an address of a network the operator allows (--channel-networks)")
	}
	for _, a := range addrs {
		if err := n.Check(a, plain); err != nil {
			return err
		}
	}
	return nil
}

// oddIPv4 reads the forms of an IPv4 address that resolvers accept besides the dotted quad
// (2130706433, 0x7f000001, 0177.0.0.1, 127.1), so that they are checked as addresses.
func oddIPv4(host string) (netip.Addr, bool) {
	if host == "" || strings.Trim(host, "0123456789abcdefx.") != "" || strings.Count(host, ".") > 3 {
		return netip.Addr{}, false
	}
	// inet_aton's rules, which glibc's getaddrinfo follows: the last part fills what is left.
	parts := strings.Split(host, ".")
	var vals []uint64
	for _, p := range parts {
		var v uint64
		var err error
		switch {
		case strings.HasPrefix(p, "0x"):
			v, err = strconv.ParseUint(p[2:], 16, 32)
		case len(p) > 1 && p[0] == '0':
			v, err = strconv.ParseUint(p[1:], 8, 32)
		default:
			v, err = strconv.ParseUint(p, 10, 32)
		}
		if err != nil {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		ip |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(32-8*(len(vals)-1)) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// Client is an HTTP client for deliveries: it dials only the addresses the rule allows (the
// address actually dialled, after the name is resolved: a name that resolves elsewhere
// between the check and the dial is caught), follows no redirect, and uses no proxy (a proxy
// would dial for it). listedOnly is for plain http:// push endpoints.
func (n Networks) Client(timeout time.Duration, listedOnly bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %v", address, err)
			}
			return n.Check(ap.Addr(), listedOnly)
		}}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Timeout: timeout, Transport: t,
		// A channel is the URL given: a redirect is an answer, not a way elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
