package main

import (
	"context"
	"fmt"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var cmdSessions = &command{
	name:     "sessions",
	synopsis: "[--json]",
	summary:  "list your sessions (PRINCIPAL ID BYTES CREATED LAST-USED); an admin token sees all",
	run:      runSessions,
}

func runSessions(c *cli, args []string) error {
	fs := c.flags(`List the sessions and their workspaces: yours, or every principal's with an
admin token. A session expires when it has been idle for sessions.idleTimeout.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListSessionsResponse, error) {
		return pb.NewSessionServiceClient(k.cc).ListSessions(ctx, &pb.ListSessionsRequest{})
	}, c.printSessions)
}

func (c *cli) printSessions(resp *pb.ListSessionsResponse) error {
	if len(resp.GetSessions()) == 0 {
		fmt.Fprintln(c.stdout, "No sessions.")
		return nil
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "PRINCIPAL\tID\tBYTES\tCREATED\tLAST-USED")
	for _, s := range resp.GetSessions() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.GetPrincipal(), s.GetId(), s.GetBytes(),
			s.GetCreatedAt().AsTime().UTC().Format(time.RFC3339), s.GetLastUsedAt().AsTime().UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

var cmdDeleteSession = &command{
	name:     "delete-session",
	synopsis: "ID [--principal NAME]",
	summary:  "delete a session and its workspace now",
	run:      runDeleteSession,
}

func runDeleteSession(c *cli, args []string) error {
	fs := c.flags(`Delete one of your sessions and its workspace now. An admin token may name
another principal's session with --principal. Refused while a call in the
session runs.`)
	principal := fs.String("principal", "", "the session's owner (admin tokens only; default: you)")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.DeleteSessionResponse, error) {
		return pb.NewSessionServiceClient(k.cc).DeleteSession(ctx, &pb.DeleteSessionRequest{Id: pos[0], Principal: *principal})
	}, func(*pb.DeleteSessionResponse) error {
		fmt.Fprintf(c.stdout, "deleted session %s\n", pos[0])
		return nil
	})
}
