package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var cmdConnect = &command{
	name:     "connect",
	synopsis: "NAME",
	summary:  "connect your account at an OAuth MCP server: prints the login URL, waits, prints connected",
	run:      runConnect,
}

func runConnect(c *cli, args []string) error {
	fs := c.flags(`Connect your own account at NAME, an MCP server whose config has an "oauth"
section. Prints the authorization URL on a line of its own: open it in a
browser and log in. The command waits until the login has completed (on any
replica) and prints "connected". An admin's connection is also the one the
server's tools are listed with: until an admin connects, the server's
status is "unauthorized". Other callers are asked to log in by their first
call (a PENDING result of kind "authorization"), or connect ahead with this
command. Waits as long as the login may take (--timeout applies only when
given).`)
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	k, err := c.dial()
	if err != nil {
		return err
	}
	defer k.Close()
	ctx, cancel := context.WithCancel(c.ctx)
	if c.g.set["timeout"] {
		ctx, cancel = c.callContext()
	}
	defer cancel()
	stream, err := pb.NewConnectionServiceClient(k.cc).Connect(ctx, &pb.ConnectRequest{Name: pos[0]})
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the server ended the login of %s without a result", pos[0])
		}
		if err != nil {
			return err
		}
		if c.g.json {
			if err := writeJSON(c.stdout, ev); err != nil {
				return err
			}
		}
		if u := ev.GetAuthorizationUrl(); u != "" && !c.g.json {
			fmt.Fprintf(c.stderr, "Open this URL in a browser and log in to %s (before %s):\n", pos[0], ev.GetExpiresAt().AsTime().Local().Format(time.Kitchen))
			fmt.Fprintln(c.stdout, u)
		}
		if conn := ev.GetConnected(); conn != nil {
			if !c.g.json {
				fmt.Fprintln(c.stdout, "connected")
			}
			return nil
		}
	}
}

var cmdConnections = &command{
	name:     "connections",
	synopsis: "[--json]",
	summary:  "list your OAuth connections (an admin token sees everyone's; never a token)",
	run:      runConnections,
}

func runConnections(c *cli, args []string) error {
	fs := c.flags(`List your connections to OAuth MCP servers: the server, the scopes granted,
when the access token expires and whether it can be refreshed. An admin
token lists every principal's, marking the one each server's tools are
listed with. No token is ever shown.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListConnectionsResponse, error) {
		return pb.NewConnectionServiceClient(k.cc).ListConnections(ctx, &pb.ListConnectionsRequest{})
	}, c.printConnections)
}

func (c *cli) printConnections(resp *pb.ListConnectionsResponse) error {
	if len(resp.GetConnections()) == 0 {
		fmt.Fprintln(c.stdout, "No connections.")
		return nil
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "SERVER\tPRINCIPAL\tSCOPE\tEXPIRES\tREFRESHABLE\tLISTS-TOOLS\tCONNECTED")
	for _, x := range resp.GetConnections() {
		expires := "-"
		if x.GetExpiresAt() != nil {
			expires = x.GetExpiresAt().AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.GetUpstream(), dash(x.GetPrincipal()), dash(x.GetScope()), expires,
			yesNo(x.GetRefreshable()), yesNo(x.GetListsTools()), x.GetCreatedAt().AsTime().UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

var cmdDisconnect = &command{
	name:     "disconnect",
	synopsis: "NAME [--principal NAME]",
	summary:  "forget your connection to an OAuth MCP server and revoke it there",
	run:      runDisconnect,
}

func runDisconnect(c *cli, args []string) error {
	fs := c.flags(`Forget your connection to NAME and revoke its tokens at the server's
authorization server (RFC 7009) where it supports revocation. Your next call
to NAME asks you to log in again. An admin token may name another
principal's connection with --principal.`)
	principal := fs.String("principal", "", "the connection's owner (admin tokens only; default: you)")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.DisconnectResponse, error) {
		return pb.NewConnectionServiceClient(k.cc).Disconnect(ctx, &pb.DisconnectRequest{Name: pos[0], Principal: *principal})
	}, func(r *pb.DisconnectResponse) error {
		if r.GetRevoked() {
			fmt.Fprintf(c.stdout, "disconnected from %s (revoked at its authorization server)\n", pos[0])
		} else {
			fmt.Fprintf(c.stdout, "disconnected from %s (forgotten here; its authorization server offers no revocation, or refused it)\n", pos[0])
		}
		return nil
	})
}
