package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/parley-chat/parley/domain"
)

// runGroup is `parley group add|remove|list`: the groups agents may ask (ask_person and
// request_approval with "to"), managed by the operator on the database file.
//
//	parley group add GROUP PERSON... [--askers]   members (or, with --askers, people who may only ask it)
//	parley group remove GROUP [PERSON...]         take people out; with nobody named, delete the group
//	parley group list [GROUP]
func runGroup(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	if len(args) == 0 {
		return fmt.Errorf("parley group: add, remove or list (try: parley help)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("group "+sub, flag.ContinueOnError)
	fs.SetOutput(std.err)
	dbPath := fs.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "SQLite database file or postgres:// URL (PARLEY_DB)")
	askers := fs.Bool("askers", false, "add the people as askers: they may ask the group, and do not get its questions")
	// Flags may come anywhere: parse the words between them.
	var words []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		words, args = append(words, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case sub != "add" && sub != "remove" && sub != "list":
		return fmt.Errorf("parley group: unknown command %q (add, remove, list)", sub)
	case sub == "add" && len(words) < 2:
		return fmt.Errorf("parley group add: name the group and its people (parley group add GROUP PERSON...)")
	case sub == "remove" && len(words) < 1:
		return fmt.Errorf("parley group remove: name the group (parley group remove GROUP [PERSON...])")
	case sub == "list" && len(words) > 1:
		return fmt.Errorf("parley group list: unexpected argument %q", words[1])
	}
	db, err := openForCommand(ctx, *dbPath, "group "+sub)
	if err != nil {
		return err
	}
	defer db.Close()
	const actor = "operator"
	switch sub {
	case "add":
		role := domain.RoleMember
		if *askers {
			role = domain.RoleAsker
		}
		g, err := db.AddToGroup(ctx, words[0], words[1:], role, actor)
		if err != nil {
			return fmt.Errorf("group %s: %s", words[0], domain.ErrorMessage(err))
		}
		fmt.Fprintf(std.out, "group %s: members %s; askers %s\n", g.Name, orNone(g.People(domain.RoleMember)), orNone(g.People(domain.RoleAsker)))
		return nil
	case "remove":
		if err := db.RemoveFromGroup(ctx, words[0], words[1:], actor); err != nil {
			return fmt.Errorf("group %s: %s", words[0], domain.ErrorMessage(err))
		}
		if len(words) == 1 {
			fmt.Fprintf(std.out, "deleted the group %s\n", words[0])
		} else {
			fmt.Fprintf(std.out, "took %s out of the group %s\n", strings.Join(words[1:], ", "), words[0])
		}
		return nil
	}
	groups, err := db.Groups(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tMEMBERS\tASKERS")
	for _, g := range groups {
		if len(words) == 1 && !strings.EqualFold(g.Name, words[0]) {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", g.Name, orNone(g.People(domain.RoleMember)), orNone(g.People(domain.RoleAsker)))
	}
	return w.Flush()
}

// orNone lists names, or says there are none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}
