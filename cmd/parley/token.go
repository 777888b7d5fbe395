package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/parley-chat/parley/domain"
)

// runToken is `parley token ...`: a person's access tokens (for `parley chat` and the API),
// managed by the operator on the database file.
func runToken(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	var userName string
	sub, name, dbPath, err := addListRevoke("token", args, getenv, std, func(fs *flag.FlagSet) {
		fs.StringVar(&userName, "user", "", "the account whose tokens these are")
	}, "name the token (parley token %s NAME --user U)")
	if err != nil {
		return err
	}
	if userName == "" {
		return fmt.Errorf("parley token %s: say whose tokens with --user NAME", sub)
	}
	db, err := openForCommand(ctx, dbPath, "token "+sub)
	if err != nil {
		return err
	}
	defer db.Close()
	u, _, err := db.UserByName(ctx, userName)
	if err != nil {
		return fmt.Errorf("%s: %s", userName, domain.ErrorMessage(err))
	}
	switch sub {
	case "add":
		secret, _, err := db.CreateToken(ctx, u.ID, name)
		if err != nil {
			return fmt.Errorf("%s: %s", u.Name, domain.ErrorMessage(err))
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
			fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, stamp(t.Created, ""), stamp(t.LastUsed, "never"))
		}
		return w.Flush()
	}
	if _, err := db.RevokeToken(ctx, u.ID, name); err != nil {
		return fmt.Errorf("%s: %s", u.Name, domain.ErrorMessage(err))
	}
	fmt.Fprintf(std.out, "revoked %s's token %q\n", u.Name, name)
	return nil
}
