package main

import (
	"fmt"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var cmdApprovals = &command{
	name:     "approvals",
	synopsis: "[--json]",
	summary:  "list the calls and tool definitions waiting for, or decided by, a human (admins and policy.approvers)",
	run:      runApprovals,
}

func runApprovals(c *cli, args []string) error {
	fs := c.flags(`List the approvals the server holds, newest first: calls a Cedar policy
annotated @approval("required") holds back, and tool definitions pinning holds
back (ids def_...: a source changed or added a tool), pending and decided. For
each pending definition the old and the new text follow the table. Needs an
admin token or one named (or in a group named) in policy.approvers.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	k, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := pb.NewApprovalServiceClient(k.cc).ListApprovals(ctx, &pb.ListApprovalsRequest{})
	if err != nil {
		return err
	}
	if c.g.json {
		return writeJSON(c.stdout, resp)
	}
	if len(resp.GetApprovals()) == 0 {
		fmt.Fprintln(c.stdout, "No approvals.")
		return nil
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "ID\tSTATUS\tPRINCIPAL\tSESSION\tTOOL\tPOLICY\tEXPIRES\tDECIDED-BY\tARGUMENTS")
	for _, a := range resp.GetApprovals() {
		expires := "-"
		if a.GetExpiresAt() != nil {
			expires = a.GetExpiresAt().AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.GetId(), a.GetStatus(), dash(a.GetPrincipal()), dash(a.GetSession()), a.GetTool(), dash(a.GetPolicy()),
			expires, dash(a.GetDecidedBy()), a.GetSummary())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range resp.GetApprovals() {
		if d := a.GetDefinition(); d != nil && a.GetStatus() == "pending" {
			printDefinitionChange(c.stdout, a.GetId(), d)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var cmdApprove = &command{
	name:     "approve",
	synopsis: "ID [--reason TEXT]",
	summary:  "let a held-back call run once, or pin a held tool definition",
	run:      func(c *cli, args []string) error { return runDecide(c, args, true) },
}

var cmdDeny = &command{
	name:     "deny",
	synopsis: "ID [--reason TEXT]",
	summary:  "refuse a held-back call, or keep a tool definition held",
	run:      func(c *cli, args []string) error { return runDecide(c, args, false) },
}

func runDecide(c *cli, args []string, approve bool) error {
	help := `Approve a pending approval: the call it holds back runs once, when its caller
resumes it (Execute with the same name and arguments and answer {id, ok: true})
or at once for a caller that waits (ExecuteStream, /mcp). You cannot approve
your own calls. A held tool definition (def_...) is pinned: the tool is
listed and runs from then on. The audit log records who decided.`
	if !approve {
		help = `Deny a pending approval: the call it holds back ends denied, with your reason.
You cannot deny your own calls. A held tool definition (def_...) stays held.
The audit log records who decided.`
	}
	fs := c.flags(help)
	reason := fs.String("reason", "", "why (recorded in the audit log; shown to the caller on deny)")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	k, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	client := pb.NewApprovalServiceClient(k.cc)
	var a *pb.Approval
	if approve {
		resp, err := client.Approve(ctx, &pb.ApproveRequest{Id: pos[0], Reason: *reason})
		if err != nil {
			return err
		}
		a = resp.GetApproval()
	} else {
		resp, err := client.Deny(ctx, &pb.DenyRequest{Id: pos[0], Reason: *reason})
		if err != nil {
			return err
		}
		a = resp.GetApproval()
	}
	if c.g.json {
		return writeJSON(c.stdout, a)
	}
	if a.GetDefinition() != nil {
		fmt.Fprintf(c.stdout, "%s %s: %s\n", a.GetStatus(), a.GetId(), a.GetSummary())
		return nil
	}
	fmt.Fprintf(c.stdout, "%s %s: %s's call of %s with %s (policy %s)\n", a.GetStatus(), a.GetId(), a.GetPrincipal(), a.GetTool(), a.GetSummary(), a.GetPolicy())
	return nil
}
