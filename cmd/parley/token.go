package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/parley-chat/parley/agent"
)

// runToken is `parley token ...`: a person's access tokens (for `parley chat` and the API),
// managed by the operator on the database file.
func runToken(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	if len(args) == 0 {
		return errors.New("parley token: add, list or revoke (try: parley help)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	fs.SetOutput(std.err)
	dbPath := fs.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "SQLite database file (PARLEY_DB)")
	userName := fs.String("user", "", "the account whose tokens these are")
	name, rest, err := nameAndFlags(fs, args)
	if err != nil {
		return err
	}
	switch sub {
	case "add", "list", "revoke":
	default:
		return fmt.Errorf("parley token: unknown command %q (add, list, revoke)", sub)
	}
	if sub == "list" && name != "" {
		rest = append([]string{name}, rest...)
	}
	if len(rest) > 0 {
		return fmt.Errorf("parley token %s: unexpected argument %q", sub, rest[0])
	}
	if name == "" && sub != "list" {
		return fmt.Errorf("parley token %s: name the token (parley token %s NAME --user U)", sub, sub)
	}
	if *userName == "" {
		return fmt.Errorf("parley token %s: say whose tokens with --user NAME", sub)
	}
	db, err := openForCommand(ctx, *dbPath, "token "+sub)
	if err != nil {
		return err
	}
	defer db.Close()
	u, _, err := db.UserByName(ctx, *userName)
	if err != nil {
		return fmt.Errorf("%s: %s", *userName, agent.ErrorMessage(err))
	}
	switch sub {
	case "add":
		secret, _, err := db.CreateToken(ctx, u.ID, name)
		if err != nil {
			return fmt.Errorf("%s: %s", u.Name, agent.ErrorMessage(err))
		}
		// The token alone on stdout, so that $(parley token add ...) is the token.
		fmt.Fprintln(std.out, secret)
		fmt.Fprintf(std.err, "made token %q for %s; it is shown this once. Use it with: export PARLEY_TOKEN=<the token>; parley chat\n", name, u.Name)
		return nil
	case "list":
		tokens, err := db.Tokens(ctx, u.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tCREATED\tLAST USED")
		for _, t := range tokens {
			used := "never"
			if !t.LastUsed.IsZero() {
				used = t.LastUsed.UTC().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, t.Created.UTC().Format("2006-01-02 15:04"), used)
		}
		return w.Flush()
	}
	if _, err := db.RevokeToken(ctx, u.ID, name); err != nil {
		return fmt.Errorf("%s: %s", u.Name, agent.ErrorMessage(err))
	}
	fmt.Fprintf(std.out, "revoked %s's token %q\n", u.Name, name)
	return nil
}
