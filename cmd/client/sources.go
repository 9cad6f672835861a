package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// errorWidth keeps a long source error (a stack of wrapped causes) from
// blowing up the table; the whole text follows the table, wrapped at
// wrapWidth (the stderr tail of a server that failed to start is at its
// end), and --json has it too.
const (
	errorWidth = 60
	wrapWidth  = 100
)

var cmdSources = &command{
	name:     "sources",
	synopsis: "[--json]",
	summary:  "list the sources (KIND NAME STATUS TOOLS ERROR) and shadowed tools",
	run:      runSources,
}

func runSources(c *cli, args []string) error {
	fs := c.flags(`List every source and sub-source (each MCP server, each A2A agent) with its
status and tool count, then the tools hidden by a higher-precedence source.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListSourcesResponse, error) {
		return k.sources.ListSources(ctx, &pb.ListSourcesRequest{})
	}, c.printSources)
}

func (c *cli) printSources(resp *pb.ListSourcesResponse) error {
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "KIND\tNAME\tSTATUS\tTOOLS\tERROR")
	for _, s := range resp.GetSources() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.GetKind(), s.GetName(), s.GetStatus(), s.GetToolCount(), orDash(cell(s.GetError(), errorWidth)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Shadowing is listed apart: a name per line would break the table.
	first := true
	for _, s := range resp.GetSources() {
		if len(s.GetShadowed()) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(c.stdout, "\nShadowed (hidden by a higher-precedence source with the same name):")
			first = false
		}
		fmt.Fprintf(c.stdout, "  %s/%s: %s\n", s.GetKind(), s.GetName(), strings.Join(s.GetShadowed(), ", "))
	}
	first = true
	for _, s := range resp.GetSources() {
		if cell(s.GetError(), errorWidth) == s.GetError() {
			continue // whole in the table
		}
		if first {
			fmt.Fprintln(c.stdout, "\nErrors in full:")
			first = false
		}
		fmt.Fprintf(c.stdout, "  %s/%s:\n", s.GetKind(), s.GetName())
		for _, line := range wrap(s.GetError(), wrapWidth-4) {
			fmt.Fprintf(c.stdout, "    %s\n", line)
		}
	}
	first = true
	for _, s := range resp.GetSources() {
		if s.GetSandbox() == "" {
			continue
		}
		if first {
			fmt.Fprintln(c.stdout, "\nSandboxed (their processes run in the command sandbox):")
			first = false
		}
		fmt.Fprintf(c.stdout, "  %s/%s: %s\n", s.GetKind(), s.GetName(), s.GetSandbox())
	}
	return nil
}

var cmdSkills = &command{
	name:     "skills",
	synopsis: "[--json]",
	summary:  "list the discovered skills and the SKILL.md files skipped, with reasons",
	run:      runSkills,
}

func runSkills(c *cli, args []string) error {
	fs := c.flags(`List the skills the skill tool can load, then the SKILL.md files that were
skipped and why (missing-name, malformed-frontmatter, duplicate-name, unreadable).`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListSkillsResponse, error) {
		return k.sources.ListSkills(ctx, &pb.ListSkillsRequest{})
	}, func(resp *pb.ListSkillsResponse) error { return printSkills(c.stdout, resp) })
}

func printSkills(w io.Writer, resp *pb.ListSkillsResponse) error {
	if len(resp.GetSkills()) == 0 {
		fmt.Fprintln(w, "No skills found.")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "NAME\tDESCRIPTION\tDIR")
		for _, s := range resp.GetSkills() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.GetName(), orDash(cell(s.GetDescription(), descriptionWidth)), s.GetDir())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(resp.GetSkipped()) > 0 {
		fmt.Fprintln(w, "\nSkipped:")
		tw := newTable(w)
		fmt.Fprintln(tw, "PATH\tREASON\tDETAIL")
		for _, s := range resp.GetSkipped() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.GetPath(), s.GetReason(), orDash(cell(s.GetDetail(), errorWidth)))
		}
		return tw.Flush()
	}
	return nil
}

var cmdSkillsPrompt = &command{
	name:     "skills-prompt",
	synopsis: "",
	summary:  "print the skills catalog text for a system prompt",
	run:      runSkillsPrompt,
}

func runSkillsPrompt(c *cli, args []string) error {
	fs := c.flags(`Print the skills catalog text to put in an agent's system prompt.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.GetSkillsPromptResponse, error) {
		return k.reg.GetSkillsPrompt(ctx, &pb.GetSkillsPromptRequest{})
	}, func(resp *pb.GetSkillsPromptResponse) error {
		printText(c.stdout, resp.GetPrompt())
		return nil
	})
}

var cmdReload = &command{
	name:     "reload",
	synopsis: "[--json]",
	summary:  "make the server re-read its config (as SIGHUP does)",
	run:      runReload,
}

func runReload(c *cli, args []string) error {
	fs := c.flags(`Make the server re-read its config file and swap the changed sources
atomically. A config that does not validate is refused with the reason and
the old one keeps serving.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ReloadResponse, error) {
		return k.sources.Reload(ctx, &pb.ReloadRequest{})
	}, func(resp *pb.ReloadResponse) error {
		fmt.Fprintf(c.stdout, "reloaded: revision %d\n", resp.GetRevision())
		fmt.Fprintf(c.stdout, "rebuilt: %s\n", orNone(resp.GetRebuilt()))
		fmt.Fprintf(c.stdout, "removed: %s\n", orNone(resp.GetRemoved()))
		printReplicas(c.stdout, resp)
		return nil
	})
}

// printReplicas says how many replicas applied a reload broadcast over
// cluster.redis, and why each failure failed.
func printReplicas(w io.Writer, resp *pb.ReloadResponse) {
	reps := resp.GetReplicas()
	if len(reps) == 0 && resp.GetReplicasError() == "" {
		return // one replica: nothing to add
	}
	applied := 0
	for _, r := range reps {
		if r.GetApplied() {
			applied++
		}
	}
	fmt.Fprintf(w, "replicas: %d of %d applied\n", applied, len(reps))
	for _, r := range reps {
		if !r.GetApplied() {
			fmt.Fprintf(w, "  failed: %s: %s\n", r.GetReplica(), r.GetError())
		}
	}
	if e := resp.GetReplicasError(); e != "" {
		fmt.Fprintf(w, "  the other replicas were not asked: %s\n", e)
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// wrap cuts text into lines of at most width bytes at spaces (a word
// longer than width gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
