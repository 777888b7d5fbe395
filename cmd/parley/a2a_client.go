package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/parley-chat/parley/domain"
)

// runA2AClient is `parley a2a-client ...`: the clients of Parley's A2A server (--a2a), each
// with a token of its own, managed by the operator on the database file.
func runA2AClient(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	sub, name, dbPath, err := addListRevoke("a2a-client", args, getenv, std, nil, "name the client (parley a2a-client %s NAME)")
	if err != nil {
		return err
	}
	db, err := openForCommand(ctx, dbPath, "a2a-client "+sub)
	if err != nil {
		return err
	}
	defer db.Close()
	const actor = "parley a2a-client (command line)"
	switch sub {
	case "add":
		secret, _, err := db.CreateA2AClient(ctx, name, actor)
		if err != nil {
			return errors.New(domain.ErrorMessage(err))
		}
		// The token alone on stdout, so that $(parley a2a-client add ...) is the token.
		fmt.Fprintln(std.out, secret)
		fmt.Fprintf(std.err, "made the A2A client %q; its token is shown this once. The client sends it as: Authorization: Bearer <the token>\n", name)
		return nil
	case "list":
		clients, err := db.A2AClients(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tCREATED\tLAST USED\tREVOKED")
		for _, c := range clients {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Name, stamp(c.Created, ""), stamp(c.LastUsed, "never"), stamp(c.Revoked, "-"))
		}
		return w.Flush()
	}
	if _, err := db.RevokeA2AClient(ctx, name, actor); err != nil {
		return errors.New(domain.ErrorMessage(err))
	}
	fmt.Fprintf(std.out, "revoked the A2A client %q: its token is refused, and its open streams end within a second\n", name)
	return nil
}
